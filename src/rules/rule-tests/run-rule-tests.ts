import { closestMatch } from '../../core/source/closest-match.js';
import type { RuleSet, SourcePos, TemplateRef } from '../compiled-rule.js';
import { evaluate } from '../evaluate.js';
import type {
  EvaluationResult,
  Explanation,
  Intent,
  RuleEvaluationError,
} from '../evaluation-result.js';
import type { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import type { PackageNameOf } from '../match-interface.js';
import { indexRules } from '../rule-index.js';
import { SlotEvaluation } from '../slot-evaluation.js';
import { compareCommands } from './compare-commands.js';
import { compareErrors } from './compare-errors.js';
import { testPackageId } from './given-event.js';
import type { RuleTestCase, RuleTestFile } from './rule-test-case.js';

export type RuleTestCaseResult = {
  readonly name: string;
  readonly pos: SourcePos;
  readonly passed: boolean;
  /** Each failure as lines: a headline, then `- expected` / `+ actual` lines and the why. */
  readonly failures: readonly (readonly string[])[];
  readonly intents: readonly Intent[];
  readonly errors: readonly RuleEvaluationError[];
  readonly explanations: readonly Explanation[];
};

export type RuleTestFileResult = {
  readonly path: string;
  readonly cases: readonly RuleTestCaseResult[];
  readonly passed: number;
  readonly failed: number;
};

export type RunRuleTestsOptions = {
  /**
   * The templates' field types (a model): expected values are then compared by their Daml type
   * (Numeric by value, Time by instant, Text as written). See daml-value-match.ts.
   */
  readonly packages?: PackageCatalogue;
};

/** Runs every case of a parsed test file against loaded rules. */
export function runRuleTests(
  file: RuleTestFile,
  ruleSet: RuleSet,
  options: RunRuleTestsOptions = {},
): RuleTestFileResult {
  const index = indexRules(ruleSet);
  const names = testPackageNames(file, ruleSet, options.packages);
  const cases = file.cases.map((c) => runCase(c, file, ruleSet, index, options.packages, names));
  const passed = cases.filter((c) => c.passed).length;
  return { path: file.path, cases, passed, failed: cases.length - passed };
}

function runCase(
  c: RuleTestCase,
  file: RuleTestFile,
  ruleSet: RuleSet,
  index: ReturnType<typeof indexRules>,
  packages: PackageCatalogue | undefined,
  packageNameOf: PackageNameOf,
): RuleTestCaseResult {
  const results: EvaluationResult[] = [];
  const failures: string[][] = [];
  if (c.slot === null) {
    for (const g of c.given) {
      results.push(
        evaluate(
          index,
          { transaction: g.transaction, event: g.event },
          { parties: file.parties, now: c.now },
          { explain: 'all', packageNameOf },
        ),
      );
    }
  } else {
    const schedules = ruleSet.rules.filter((r) => r.trigger.kind === 'schedule');
    for (const id of c.slotRules ?? []) {
      if (!schedules.some((r) => r.id === id)) {
        const guess = closestMatch(
          id,
          schedules.map((r) => r.id),
        );
        failures.push([
          `no schedule rule "${id}" in the loaded rules${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
        ]);
      }
    }
    for (const rule of schedules) {
      if (c.slotRules !== null && !c.slotRules.includes(rule.id)) continue;
      const ctx = { parties: file.parties, snapshotOffset: c.snapshotOffset, packageNameOf };
      // As a slot runs: each contract in order, then the end (the firing without forEach, the
      // last batches with forEach.batch).
      const evaluation = new SlotEvaluation(rule, c.slot, ctx);
      if (rule.trigger.kind === 'schedule' && rule.trigger.forEach !== null) {
        for (const contract of c.contracts) results.push(evaluation.contract(contract));
      }
      results.push(evaluation.end());
    }
  }
  const intents = results.flatMap((r) => r.intents);
  const errors = results.flatMap((r) => r.errors);
  const explanations = results.flatMap((r) => r.explanations);

  if (c.expect !== null) {
    failures.push(...compareCommands(c.expect, intents, explanations, packages));
  }
  failures.push(...compareErrors(c.expectErrors, errors));
  return {
    name: c.name,
    pos: c.pos,
    passed: failures.length === 0,
    failures,
    intents,
    errors,
    explanations,
  };
}

/**
 * Package names by the ids test events carry: the made-up ids the test file's `#name`
 * references become (testPackageId), for every package the file or a rule names, then the
 * catalogue's.
 */
function testPackageNames(
  file: RuleTestFile,
  ruleSet: RuleSet,
  packages: PackageCatalogue | undefined,
): PackageNameOf {
  const byId = new Map<string, string>(file.packageNames);
  const add = (ref: TemplateRef | undefined): void => {
    if (ref?.form === 'package-name') byId.set(testPackageId(ref.packageName), ref.packageName);
  };
  for (const rule of ruleSet.rules) {
    const trigger = rule.trigger;
    add(trigger.kind === 'schedule' ? trigger.forEach?.template : trigger.template);
    for (const action of rule.then) add(action.template);
  }
  return (id) => byId.get(id) ?? packages?.packageNameOf(id);
}
