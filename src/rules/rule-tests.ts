import type { ErrorObject } from 'ajv';
import { schemaPropertyNames } from '../core/schema-property-names.js';
import { parseYamlSource, schemaChecker, type SchemaProblem } from '../core/source/index.js';
import { sha256Hex } from '../core/sha256-hex.js';
import type { YamlLocator} from '../core/yaml-locator.js';
import { type YamlPath } from '../core/yaml-locator.js';
import type {
  ArchivedEvent,
  CreatedEvent,
  Event,
  ExercisedEvent,
} from '../ledger/wire/wire-types.js';
import { numberText } from './daml-number-text.js';
import { commandFieldType, fieldType, sameDamlScalar, valueKind } from './daml-value-match.js';
import type { CatalogueType, PackageCatalogue } from './package-catalogue.js';
import { closestMatch } from '../core/source/closest-match.js';
import type { RuleSet, SourcePos } from './compiled-rule.js';
import { evaluate, type TransactionInfo } from './evaluate.js';
import { evaluateSlot } from './evaluate-slot.js';
import type {
  EvaluationResult,
  Explanation,
  Intent,
  RuleEvaluationError,
} from './evaluation-result.js';
import { formatRuleEvaluationError } from './evaluation-result.js';
import { formatExplanation } from './format-explanation.js';
import { parseTemplateRef } from './parse-template-ref.js';
import { indexRules } from './rule-index.js';
import type { RuleProblem, RuleProblemCode } from './rule-problem.js';

/*
 * Rule unit tests (`ledgerbot test`): `promtool test rules` for ledger rules. A test file names
 * rule files and parties, then cases: given these events (or, for schedule rules, this slot and
 * these active contracts), expect these commands, or none, or these rule errors.
 *
 *   rules: ../rules                     # files or directories, relative to this file
 *   parties: { payer: "Payer::1220aa", issuer: "Issuer::1220bb" }
 *   now: "2025-03-03T09:30:00Z"         # optional default for every case
 *   tests:
 *     - name: the payer accepts a small invoice
 *       given:
 *         - created:
 *             template: "#invoices:Invoice:Invoice"
 *             createArgument: { amount: "999.99", currency: USD }
 *       expect:
 *         - rule: accept-small-invoices
 *           createAndExercise: { choice: AcceptInvoice }
 *           actAs: [payer]
 *
 * Pure: parsing takes the text, running takes the loaded rules; the CLI does the reading.
 */

/** The kinds of event a `given:` item can be. */
export const RULE_TEST_KINDS = ['created', 'exercised', 'archived'] as const;
const COMMAND_KINDS = {
  createAndExercise: 'CreateAndExerciseCommand',
  create: 'CreateCommand',
  exercise: 'ExerciseCommand',
  exerciseByKey: 'ExerciseByKeyCommand',
} as const;
type CommandKind = keyof typeof COMMAND_KINDS;

export type ExpectedCommand = {
  readonly pos: SourcePos;
  readonly rule: string | null;
  /** Rule-language kind and fields (template, choice, createArguments, ...), matched partially. */
  readonly command: { readonly kind: CommandKind; readonly fields: Record<string, unknown> } | null;
  readonly actAs: readonly string[] | null;
  readonly readAs: readonly string[] | null;
  readonly workflowId: string | null;
  readonly commandId: string | null;
};

export type ExpectedError = {
  readonly pos: SourcePos;
  readonly rule: string;
  /** A part of the message that must appear. */
  readonly message: string | null;
  readonly code: string | null;
};

export type GivenEvent = {
  readonly pos: SourcePos;
  readonly transaction: TransactionInfo;
  readonly event: Event;
};

export type RuleTestCase = {
  readonly name: string;
  readonly pos: SourcePos;
  readonly now: Date;
  /** Event cases: each event is its own transaction, evaluated in order. */
  readonly given: readonly GivenEvent[];
  /** Schedule cases: the slot time (also `now`), or null for an event case. */
  readonly slot: Date | null;
  /** Schedule rules the slot runs; null: all of them. */
  readonly slotRules: readonly string[] | null;
  readonly contracts: readonly CreatedEvent[];
  readonly snapshotOffset: number;
  readonly expect: readonly ExpectedCommand[] | null;
  readonly expectErrors: readonly ExpectedError[] | null;
};

export type RuleTestFile = {
  readonly path: string;
  /** Rule files or directories as written (relative to the test file). */
  readonly rules: readonly string[];
  /** Where `rules:` is written, for problems reading them. */
  readonly rulesPos: SourcePos;
  readonly parties: Readonly<Record<string, string>>;
  readonly cases: readonly RuleTestCase[];
};

export type ParsedRuleTestFile =
  | { readonly ok: true; readonly file: RuleTestFile }
  | { readonly ok: false; readonly problems: readonly RuleProblem[] };

const DEFAULT_NOW = '2025-01-01T00:00:00Z';
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

// ---- the schema ----------------------------------------------------------------------------

const stringList = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };
const timestamp = { type: 'string', pattern: TIMESTAMP.source };
const txFields = {
  updateId: { type: 'string', minLength: 1 },
  offset: { type: 'integer', minimum: 1 },
  nodeId: { type: 'integer', minimum: 0 },
  recordTime: timestamp,
  effectiveAt: timestamp,
  workflowId: { type: 'string' },
};
const common = {
  template: { type: 'string' },
  contractId: { type: 'string', minLength: 1 },
  packageName: { type: 'string', minLength: 1 },
  witnesses: stringList,
};
const createdFields = {
  ...common,
  createArgument: { type: 'object' },
  contractKey: {},
  signatories: stringList,
  observers: stringList,
  createdAt: timestamp,
  createdEventBlob: { type: 'string' },
};
const obj = (properties: Record<string, unknown>, required: string[] = ['template']): object => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties,
});
const commandFields = obj(
  {
    template: { type: 'string' },
    createArguments: {},
    contractId: {},
    contractKey: {},
    choice: { type: 'string' },
    choiceArgument: {},
  },
  [],
);

export const TEST_FILE_SCHEMA = obj(
  {
    rules: stringList,
    parties: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
    now: timestamp,
    tests: {
      type: 'array',
      minItems: 1,
      items: obj(
        {
          name: { type: 'string', minLength: 1 },
          now: timestamp,
          given: {
            type: 'array',
            items: obj(
              {
                created: obj({ ...createdFields, ...txFields }),
                exercised: obj(
                  {
                    ...common,
                    ...txFields,
                    choice: { type: 'string', minLength: 1 },
                    choiceArgument: {},
                    consuming: { type: 'boolean' },
                    actingParties: stringList,
                    exerciseResult: {},
                    interfaceId: { type: 'string' },
                    lastDescendantNodeId: { type: 'integer', minimum: 0 },
                  },
                  ['template', 'choice'],
                ),
                archived: obj({ ...common, ...txFields }),
              },
              [],
            ),
          },
          slot: timestamp,
          rule: stringList,
          contracts: { type: 'array', items: obj({ ...createdFields, offset: txFields.offset }) },
          snapshotOffset: { type: 'integer', minimum: 0 },
          expect: {
            type: 'array',
            items: obj(
              {
                rule: { type: 'string' },
                createAndExercise: commandFields,
                create: commandFields,
                exercise: commandFields,
                exerciseByKey: commandFields,
                actAs: stringList,
                readAs: stringList,
                workflowId: { type: 'string' },
                commandId: { type: 'string' },
              },
              [],
            ),
          },
          expectErrors: {
            type: 'array',
            items: obj(
              { rule: { type: 'string' }, message: { type: 'string' }, code: { type: 'string' } },
              ['rule'],
            ),
          },
        },
        ['name'],
      ),
    },
  },
  ['rules', 'parties', 'tests'],
);

const checkTestFile = schemaChecker(TEST_FILE_SCHEMA, { explain: explainTestFileError });

// ---- parsing -------------------------------------------------------------------------------

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
    const built = buildCase(t, path, { at, parties, fileNow, report, caseIndex: i });
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
    },
  };
}

type BuildContext = {
  readonly at: YamlLocator;
  readonly parties: Readonly<Record<string, string>>;
  readonly fileNow: string | null;
  readonly caseIndex: number;
  readonly report: (pos: SourcePos, code: RuleProblemCode, message: string, hint?: string) => void;
};

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
  const kind = (Object.keys(COMMAND_KINDS) as CommandKind[]).find((k) => e[k] !== undefined);
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

/** Party aliases of the test file become their ids; anything else is taken as a party id. */
function resolveAll(value: unknown, parties: Readonly<Record<string, string>>): string[] {
  return asList(value).map((p) => (Object.hasOwn(parties, p) ? parties[p]! : p));
}

function asList(value: unknown): string[] {
  return typeof value === 'string' ? [value] : (value as string[]);
}

/** A stable fake package id for a package name: tests need the package-id form in events. */
export function testPackageId(packageName: string): string {
  return sha256Hex(`ledgerbot-test-package:${packageName}`);
}

/**
 * Daml values on the wire carry Int64 and Numeric as text. Numbers written in a test file are
 * turned into text the same way, so a rule that works in a test works against a ledger.
 */
function wireValue(value: unknown): unknown {
  if (typeof value === 'number') return numberText(value) ?? String(value);
  if (Array.isArray(value)) return value.map(wireValue);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wireValue(v)]));
  }
  return value;
}

function buildEvent(
  kind: (typeof RULE_TEST_KINDS)[number],
  g: Raw,
  path: YamlPath,
  ctx: BuildContext,
  index: number,
  nowText: string | null,
): GivenEvent | null {
  const ref = parseTemplateRef(g.template as string);
  if (ref === null) {
    ctx.report(
      ctx.at.pos([...path, 'template']),
      'BAD_TEMPLATE_REF',
      `"${g.template as string}" is not a template reference`,
      'write "#package-name:Module:Entity", e.g. "#invoices:Invoice:Invoice"',
    );
    return null;
  }
  const packageName =
    (g.packageName as string | undefined) ?? (ref.form === 'package-name' ? ref.packageName : '');
  if (packageName === '') {
    ctx.report(
      ctx.at.pos(path),
      'MISSING_KEY',
      'a package-id template reference needs `packageName:` too',
    );
    return null;
  }
  const templateId =
    ref.form === 'package-name' ? `${testPackageId(packageName)}:${ref.qualifiedName}` : ref.text;
  const seed = `${ctx.caseIndex}:${path.join('.')}`;
  const offset = (g.offset as number | undefined) ?? index + 1;
  const nodeId = (g.nodeId as number | undefined) ?? 0;
  const contractId = (g.contractId as string | undefined) ?? `00${sha256Hex(`contract:${seed}`)}`;
  const witnesses =
    g.witnesses === undefined ? Object.values(ctx.parties) : resolveAll(g.witnesses, ctx.parties);
  const recordTime = (g.recordTime as string | undefined) ?? nowText ?? DEFAULT_NOW;
  const transaction: TransactionInfo = {
    updateId: (g.updateId as string | undefined) ?? `1220${sha256Hex(`update:${seed}`)}`,
    offset,
    recordTime,
    effectiveAt: (g.effectiveAt as string | undefined) ?? recordTime,
    workflowId: (g.workflowId as string | undefined) ?? '',
  };
  const base = { offset, nodeId, contractId, templateId, packageName, witnessParties: witnesses };
  let event: Event;
  if (kind === 'created') {
    const signatories =
      g.signatories === undefined ? witnesses : resolveAll(g.signatories, ctx.parties);
    const created: CreatedEvent = {
      ...base,
      contractKey: g.contractKey === undefined ? null : wireValue(g.contractKey),
      createArgument: wireValue(g.createArgument ?? {}),
      createdEventBlob: (g.createdEventBlob as string | undefined) ?? '',
      interfaceViews: [],
      signatories,
      observers: g.observers === undefined ? [] : resolveAll(g.observers, ctx.parties),
      createdAt: (g.createdAt as string | undefined) ?? recordTime,
      representativePackageId: templateId.split(':')[0]!,
      acsDelta: true,
    };
    event = { CreatedEvent: created };
  } else if (kind === 'exercised') {
    const exercised: ExercisedEvent = {
      ...base,
      choice: g.choice as string,
      choiceArgument: wireValue(g.choiceArgument ?? {}),
      actingParties:
        g.actingParties === undefined ? witnesses : resolveAll(g.actingParties, ctx.parties),
      consuming: (g.consuming as boolean | undefined) ?? true,
      lastDescendantNodeId: (g.lastDescendantNodeId as number | undefined) ?? nodeId,
      exerciseResult: wireValue(g.exerciseResult ?? null),
      implementedInterfaces: [],
      acsDelta: (g.consuming as boolean | undefined) ?? true,
      ...(g.interfaceId === undefined ? {} : { interfaceId: g.interfaceId as string }),
    };
    event = { ExercisedEvent: exercised };
  } else {
    const archived: ArchivedEvent = { ...base, implementedInterfaces: [] };
    event = { ArchivedEvent: archived };
  }
  return { pos: ctx.at.pos(path), transaction, event };
}

/** Rule test files word every schema problem their own way (the CLI's tests show them). */
function explainTestFileError(e: ErrorObject, path: YamlPath): SchemaProblem<RuleProblemCode> {
  const field = [...path].reverse().find((p) => typeof p === 'string') ?? 'the file';
  const at = (code: RuleProblemCode, message: string): SchemaProblem<RuleProblemCode> => ({
    path,
    key: false,
    code,
    message,
  });
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = (e.params as { additionalProperty: string }).additionalProperty;
      const allowed = schemaPropertyNames(e.parentSchema);
      const guess = closestMatch(key, allowed);
      return {
        path: [...path, key],
        key: true,
        code: 'UNKNOWN_KEY',
        message: `unknown key "${key}"`,
        hint:
          guess === undefined
            ? `allowed here: ${allowed.join(', ')}`
            : `did you mean \`${guess}\`?`,
      };
    }
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      return at('MISSING_KEY', `missing \`${missing}:\``);
    }
    case 'pattern':
      return at(
        'BAD_VALUE',
        `${String(field)} must be a timestamp such as 2025-03-03T09:30:00Z (with Z or an offset)`,
      );
    case 'anyOf':
      return at('WRONG_TYPE', `${String(field)} must be text or a list of texts`);
    case 'type':
      return at(
        'WRONG_TYPE',
        `${String(field)} must be ${String((e.params as { type: unknown }).type)
          .replace('object', 'a mapping')
          .replace('array', 'a list')
          .replace('string', 'text')}`,
      );
    default:
      return at('SCHEMA', `${String(field)} ${e.message ?? 'is not valid'}`);
  }
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

// ---- running -------------------------------------------------------------------------------

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
  const cases = file.cases.map((c) => runCase(c, file, ruleSet, index, options.packages));
  const passed = cases.filter((c) => c.passed).length;
  return { path: file.path, cases, passed, failed: cases.length - passed };
}

function runCase(
  c: RuleTestCase,
  file: RuleTestFile,
  ruleSet: RuleSet,
  index: ReturnType<typeof indexRules>,
  packages: PackageCatalogue | undefined,
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
          { explain: 'all' },
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
      const ctx = { parties: file.parties, snapshotOffset: c.snapshotOffset };
      if (rule.trigger.kind === 'schedule' && rule.trigger.forEach === null) {
        results.push(evaluateSlot(rule, c.slot, null, ctx));
      } else {
        for (const contract of c.contracts) results.push(evaluateSlot(rule, c.slot, contract, ctx));
      }
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

type Mismatch = {
  readonly path: string;
  readonly expected: unknown;
  readonly actual: unknown;
  /** The Daml type, when the catalogue knows it. */
  readonly type?: CatalogueType;
};

function compareCommands(
  expected: readonly ExpectedCommand[],
  intents: readonly Intent[],
  explanations: readonly Explanation[],
  packages: PackageCatalogue | undefined,
): string[][] {
  const commandMismatches = (exp: ExpectedCommand, intent: Intent): Mismatch[] =>
    mismatchesOf(exp, intent, packages);
  const failures: string[][] = [];
  const used = new Set<number>();
  // Match exact ones first, so a near miss never steals the intent an exact expectation needs.
  const unmatched = expected.filter((exp) => {
    const i = intents.findIndex(
      (intent, j) => !used.has(j) && commandMismatches(exp, intent).length === 0,
    );
    if (i < 0) return true;
    used.add(i);
    return false;
  });
  const shown = new Set<number>();
  for (const exp of unmatched) {
    let best: { index: number; mismatches: Mismatch[] } | null = null;
    for (let i = 0; i < intents.length; i++) {
      if (used.has(i) || shown.has(i)) continue;
      const m = commandMismatches(exp, intents[i]!);
      if (best === null || m.length < best.mismatches.length) best = { index: i, mismatches: m };
    }
    const n = expected.indexOf(exp) + 1;
    const head = `expected command ${n}${exp.rule === null ? '' : ` from rule ${exp.rule}`} (line ${exp.pos.line}) was not produced`;
    if (best === null) {
      const why = explanations
        .filter((e) => exp.rule === null || e.ruleId === exp.rule)
        .flatMap(formatExplanation);
      failures.push([
        head,
        intents.length === 0
          ? '  no rule produced a command'
          : '  the other commands match other expectations',
        ...(why.length === 0 && exp.rule !== null
          ? [`  no rule "${exp.rule}" considered this input: check the rule id and its trigger`]
          : ['  why:', ...why.map((l) => `    ${l}`)]),
      ]);
      continue;
    }
    shown.add(best.index);
    const closest = intents[best.index]!;
    failures.push([
      head,
      `  closest: rule ${closest.ruleId}, then[${closest.actionIndex}] (- expected, + actual)`,
      ...best.mismatches.flatMap(showMismatch),
    ]);
  }
  intents.forEach((intent, i) => {
    if (used.has(i) || shown.has(i)) return;
    const why = explanations.filter((e) => e.ruleId === intent.ruleId).flatMap(formatExplanation);
    failures.push([
      `unexpected command from rule ${intent.ruleId}, then[${intent.actionIndex}]`,
      `  + ${show(intent.command)}`,
      `  + actAs: ${show(intent.actAs)}`,
      ...(why.length === 0 ? [] : ['  why:', ...why.map((l) => `    ${l}`)]),
    ]);
  });
  return failures;
}

/**
 * `- path: expected` and `+ path: actual`; when the two are of different kinds (a number and a
 * text, a timestamp and a date), each line says which, and the Daml type when it is known.
 */
function showMismatch(m: Mismatch): string[] {
  const a = valueKind(m.expected);
  const b = valueKind(m.actual);
  const daml = m.type === undefined ? undefined : damlTypeName(m.type);
  const kinds = a !== b;
  const tag = (kind: string): string =>
    kinds ? ` (${kind}${daml === undefined ? '' : `; the field is a Daml ${daml}`})` : '';
  return [
    `  - ${m.path}: ${show(m.expected)}${tag(a)}`,
    `  + ${m.path}: ${show(m.actual)}${tag(b)}`,
  ];
}

function damlTypeName(type: CatalogueType): string | undefined {
  if (type.kind === 'optional') {
    const inner = damlTypeName(type.of);
    return inner === undefined ? undefined : `Optional ${inner}`;
  }
  return type.kind === 'other' ? type.daml : undefined;
}

function mismatchesOf(
  exp: ExpectedCommand,
  intent: Intent,
  packages: PackageCatalogue | undefined,
): Mismatch[] {
  const out: Mismatch[] = [];
  if (exp.rule !== null && exp.rule !== intent.ruleId) {
    out.push({ path: 'rule', expected: exp.rule, actual: intent.ruleId });
  }
  if (exp.command !== null) {
    const wireKey = COMMAND_KINDS[exp.command.kind];
    const [actualKey, body] = Object.entries(intent.command)[0] as [string, Raw];
    if (actualKey !== wireKey) {
      const actualKind = (Object.keys(COMMAND_KINDS) as CommandKind[]).find(
        (k) => COMMAND_KINDS[k] === actualKey,
      );
      out.push({ path: 'command', expected: exp.command.kind, actual: actualKind ?? actualKey });
    } else {
      for (const [key, value] of Object.entries(exp.command.fields)) {
        const actual = key === 'template' ? body.templateId : body[key];
        const type = commandFieldType(packages, body.templateId, key, body.choice);
        partial(value, actual, `${exp.command.kind}.${key}`, out, type);
      }
    }
  }
  if (exp.actAs !== null && !sameSet(exp.actAs, intent.actAs)) {
    out.push({ path: 'actAs', expected: exp.actAs, actual: intent.actAs });
  }
  if (exp.readAs !== null && !sameSet(exp.readAs, intent.readAs)) {
    out.push({ path: 'readAs', expected: exp.readAs, actual: intent.readAs });
  }
  if (exp.workflowId !== null && exp.workflowId !== intent.workflowId) {
    out.push({ path: 'workflowId', expected: exp.workflowId, actual: intent.workflowId });
  }
  if (exp.commandId !== null && exp.commandId !== intent.commandId) {
    out.push({ path: 'commandId', expected: exp.commandId, actual: intent.commandId });
  }
  return out;
}

/**
 * Partial match: every key the expectation has must match; extra actual keys are fine. Lists
 * match item by item and must have the same length. A number matches text of the same decimal
 * value ("999.99" and 999.99), since Daml numbers travel as text.
 */
function partial(
  expected: unknown,
  actual: unknown,
  path: string,
  out: Mismatch[],
  type?: CatalogueType,
): void {
  const mismatch = (): void => {
    out.push({ path, expected, actual, ...(type === undefined ? {} : { type }) });
  };
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      mismatch();
      return;
    }
    expected.forEach((e, i) => partial(e, actual[i], `${path}[${i}]`, out, fieldType(type, i)));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      mismatch();
      return;
    }
    for (const [k, v] of Object.entries(expected)) {
      partial(v, (actual as Raw)[k], `${path}.${k}`, out, fieldType(type, k));
    }
    return;
  }
  if (!sameDamlScalar(expected, actual, type)) mismatch();
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

function compareErrors(
  expected: readonly ExpectedError[] | null,
  errors: readonly RuleEvaluationError[],
): string[][] {
  const failures: string[][] = [];
  const used = new Set<number>();
  for (const exp of expected ?? []) {
    const i = errors.findIndex(
      (e, j) =>
        !used.has(j) &&
        e.ruleId === exp.rule &&
        (exp.message === null || e.message.includes(exp.message)) &&
        (exp.code === null || e.code === exp.code),
    );
    if (i >= 0) {
      used.add(i);
      continue;
    }
    const ofRule = errors.filter((e) => e.ruleId === exp.rule);
    failures.push([
      `expected an error from rule ${exp.rule}${exp.message === null ? '' : ` containing "${exp.message}"`} (line ${exp.pos.line})`,
      ...(ofRule.length === 0
        ? [`  + rule ${exp.rule} raised no error`]
        : ofRule.map((e) => `  + ${formatRuleEvaluationError(e)}`)),
    ]);
  }
  errors.forEach((e, j) => {
    if (used.has(j)) return;
    failures.push([
      `unexpected rule error${expected === null ? ' (add `expectErrors:` if it is intended)' : ''}`,
      `  + ${formatRuleEvaluationError(e)}`,
    ]);
  });
  return failures;
}

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

// ---- reporting -----------------------------------------------------------------------------

/**
 * A test runner's report of one file: ✓ or ✗ per case, failures with their diff (`-` expected,
 * `+` actual) and, with `verbose`, the explanations of every case.
 */
export function formatRuleTestResult(
  result: RuleTestFileResult,
  options: { readonly verbose?: boolean } = {},
): string {
  const lines = [result.path];
  for (const c of result.cases) {
    lines.push(`  ${c.passed ? '✓' : '✗'} ${c.name}`);
    if (!c.passed) {
      lines.push(`      at ${c.pos.file}:${c.pos.line}:${c.pos.col}`);
      for (const f of c.failures) lines.push(...f.map((l) => `      ${l}`));
    }
    if (options.verbose === true) {
      for (const e of c.explanations) lines.push(...formatExplanation(e).map((l) => `      ${l}`));
    }
  }
  return `${lines.join('\n')}\n`;
}
