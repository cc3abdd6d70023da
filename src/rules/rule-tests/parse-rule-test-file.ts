import { parseYamlSource, schemaChecker } from '../../core/source/index.js';
import type { YamlPath } from '../../core/yaml-locator.js';
import type { CreatedEvent } from '../../ledger/wire/wire-types.js';
import type { SourcePos } from '../compiled-rule.js';
import type { RuleProblem, RuleProblemCode } from '../rule-problem.js';
import { asList, buildEvent, resolveAll, type BuildContext } from './given-event.js';
import {
  DEFAULT_NOW,
  EXPECTED_COMMAND_KINDS,
  RULE_TEST_KINDS,
  type CommandKind,
  type ExpectedCommand,
  type GivenEvent,
  type ParsedRuleTestFile,
  type RuleTestCase,
} from './rule-test-case.js';
import { validate as validateTestFile } from './generated/rule-tests-validator.js';
import { explainTestFileError, TEST_FILE_SCHEMA } from './rule-test-file-schema.js';

const checkTestFile = schemaChecker(TEST_FILE_SCHEMA, {
  compiled: validateTestFile,
  explain: explainTestFileError,
});

type Raw = Record<string, unknown>;

/**
 * Parses and checks a rule test file. Every problem comes with file:line:col; a file with any
 * problem is not run.
 */
export function parseRuleTestFile(path: string, text: string): ParsedRuleTestFile {
  const problems: RuleProblem[] = [];
  const report = (pos: SourcePos, code: RuleProblemCode, message: string, hint?: string): void => {
    problems.push({
      ...pos,
      code,
      severity: 'error',
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  };
  const parsed = parseYamlSource(path, text, { noun: 'rule test file' });
  if (!parsed.ok) {
    for (const p of parsed.problems) report(p, p.code, p.message, p.hint);
    return { ok: false, problems };
  }
  const { at, value: raw } = parsed.source;
  const check = checkTestFile(raw, at);
  if (!check.valid) {
    for (const p of check.problems) report(p, p.code, p.message, p.hint);
    return { ok: false, problems: dedupe(problems) };
  }
  const file = raw as Raw;
  const parties = file.parties as Record<string, string>;
  const fileNow = typeof file.now === 'string' ? file.now : null;
  const cases: RuleTestCase[] = [];
  const names = new Map<string, SourcePos>();
  const packageNames = new Map<string, string>();
  (file.tests as Raw[]).forEach((t, i) => {
    const path: YamlPath = ['tests', i];
    const name = t.name as string;
    const first = names.get(name);
    if (first !== undefined) {
      report(
        at.pos([...path, 'name']),
        'BAD_VALUE',
        `duplicate test name "${name}": also at ${first.file}:${first.line}:${first.col}`,
      );
    }
    names.set(name, at.pos(path));
    const built = buildCase(t, path, {
      at,
      parties,
      fileNow,
      report,
      caseIndex: i,
      packageNames,
    });
    if (built !== null) cases.push(built);
  });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    file: {
      path,
      rules: asList(file.rules),
      rulesPos: at.pos(['rules']),
      parties,
      cases,
      packageNames,
    },
  };
}

function buildCase(t: Raw, path: YamlPath, ctx: BuildContext): RuleTestCase | null {
  const { at, report } = ctx;
  const hasGiven = t.given !== undefined;
  const hasSlot = t.slot !== undefined;
  let ok = true;
  if (hasGiven === hasSlot) {
    report(
      at.pos(path),
      hasGiven ? 'BAD_VALUE' : 'MISSING_KEY',
      hasGiven
        ? 'a test has either `given` (events) or `slot` (a schedule run), not both'
        : 'a test needs `given:` (events) or `slot:` (a schedule run)',
    );
    ok = false;
  }
  if (t.expect === undefined && t.expectErrors === undefined) {
    report(
      at.pos(path),
      'MISSING_KEY',
      'a test needs `expect:` (the commands; `expect: []` for none) or `expectErrors:`',
    );
    ok = false;
  }
  if (!hasSlot && (t.contracts !== undefined || t.rule !== undefined)) {
    const key = t.contracts !== undefined ? 'contracts' : 'rule';
    report(
      at.pos([...path, key], { key: true }),
      'BAD_VALUE',
      `\`${key}\` belongs to \`slot:\` tests`,
    );
    ok = false;
  }
  const nowText =
    (t.now as string | undefined) ?? (t.slot as string | undefined) ?? ctx.fileNow ?? null;
  const given: GivenEvent[] = [];
  ((t.given as Raw[] | undefined) ?? []).forEach((g, j) => {
    const gpath = [...path, 'given', j];
    const kinds = RULE_TEST_KINDS.filter((k) => g[k] !== undefined);
    if (kinds.length !== 1) {
      report(
        at.pos(gpath),
        kinds.length === 0 ? 'MISSING_KEY' : 'BAD_VALUE',
        'each given event is exactly one of `created:`, `exercised:` or `archived:`',
      );
      ok = false;
      return;
    }
    const kind = kinds[0]!;
    const event = buildEvent(kind, g[kind] as Raw, [...gpath, kind], ctx, j, nowText);
    if (event === null) ok = false;
    else given.push(event);
  });
  const contracts: CreatedEvent[] = [];
  ((t.contracts as Raw[] | undefined) ?? []).forEach((c, j) => {
    const ev = buildEvent('created', c, [...path, 'contracts', j], ctx, j, nowText);
    if (ev === null || !('CreatedEvent' in ev.event)) ok = false;
    else contracts.push(ev.event.CreatedEvent);
  });
  if (!ok) return null;
  return {
    name: t.name as string,
    pos: at.pos(path),
    now: new Date(nowText ?? given[0]?.transaction.recordTime ?? DEFAULT_NOW),
    given,
    slot: hasSlot ? new Date(t.slot as string) : null,
    slotRules: t.rule === undefined ? null : asList(t.rule),
    contracts,
    snapshotOffset: (t.snapshotOffset as number | undefined) ?? 1,
    expect:
      t.expect === undefined
        ? null
        : (t.expect as Raw[]).map((e, j) => expected(e, at.pos([...path, 'expect', j]), ctx)),
    expectErrors:
      t.expectErrors === undefined
        ? null
        : (t.expectErrors as Raw[]).map((e, j) => ({
            pos: at.pos([...path, 'expectErrors', j]),
            rule: e.rule as string,
            message: (e.message as string | undefined) ?? null,
            code: (e.code as string | undefined) ?? null,
          })),
  };
}

function expected(e: Raw, pos: SourcePos, ctx: BuildContext): ExpectedCommand {
  const kind = (Object.keys(EXPECTED_COMMAND_KINDS) as CommandKind[]).find(
    (k) => e[k] !== undefined,
  );
  return {
    pos,
    rule: (e.rule as string | undefined) ?? null,
    command: kind === undefined ? null : { kind, fields: e[kind] as Record<string, unknown> },
    actAs: e.actAs === undefined ? null : resolveAll(e.actAs, ctx.parties),
    readAs: e.readAs === undefined ? null : resolveAll(e.readAs, ctx.parties),
    workflowId: (e.workflowId as string | undefined) ?? null,
    commandId: (e.commandId as string | undefined) ?? null,
  };
}

function dedupe(problems: readonly RuleProblem[]): RuleProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.line}:${p.col}:${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
