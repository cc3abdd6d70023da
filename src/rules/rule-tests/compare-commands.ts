import type { Explanation, Intent } from '../evaluation-result.js';
import type { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import { showType } from '../../daml-lf/daml-type.js';
import {
  commandFieldType,
  fieldType,
  sameDamlScalar,
  valueKind,
  type KnownType,
} from '../daml-value-match.js';
import { formatExplanation } from '../format-explanation.js';
import {
  EXPECTED_COMMAND_KINDS,
  type CommandKind,
  type ExpectedCommand,
} from './rule-test-case.js';

type Raw = Record<string, unknown>;

type Mismatch = {
  readonly path: string;
  readonly expected: unknown;
  readonly actual: unknown;
  /** The Daml type, when the catalogue knows it. */
  readonly type?: KnownType;
};

/**
 * The failures of a case's `expect:` against the commands produced: each expectation takes an
 * exact match first, else is shown against its closest command; commands nobody expected fail too.
 */
export function compareCommands(
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
  const daml = m.type === undefined ? undefined : showType(m.type.type);
  const kinds = a !== b;
  const tag = (kind: string): string =>
    kinds ? ` (${kind}${daml === undefined ? '' : `; the field is a Daml ${daml}`})` : '';
  return [
    `  - ${m.path}: ${show(m.expected)}${tag(a)}`,
    `  + ${m.path}: ${show(m.actual)}${tag(b)}`,
  ];
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
    const wireKey = EXPECTED_COMMAND_KINDS[exp.command.kind];
    const [actualKey, body] = Object.entries(intent.command)[0] as [string, Raw];
    if (actualKey !== wireKey) {
      const actualKind = (Object.keys(EXPECTED_COMMAND_KINDS) as CommandKind[]).find(
        (k) => EXPECTED_COMMAND_KINDS[k] === actualKey,
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
  type?: KnownType,
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

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
