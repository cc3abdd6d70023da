import type { LeadingEquality } from './cel/leading-equalities.js';
import type { CompiledRule, RuleSet } from './compiled-rule.js';
import { NOT_AS_ON_THE_WIRE } from './event-variable.js';
import {
  mayHaveThresholds,
  type ThresholdExpectation,
  type ThresholdTable,
} from './threshold-guards.js';

/**
 * An equality (or a startsWith/endsWith/contains test) the rule's first `when` condition hinges
 * on (see leading-equalities.ts), on a field of `event`: when the event holds text there that the
 * equality rejects, that condition is false
 * whatever else it says, so the rule is not evaluated (evaluate.ts). Any other value (a missing
 * field, null, a number, a map) is left to the evaluation, which errs or not as written.
 */
export type RuleGuard = {
  /** The same for equal guards of an index (field and expectation), so an event asks each once. */
  readonly id: number;
  /** The fields below `event`, joined with `.`. */
  readonly key: string;
  /** The same for the guards of an index that read the same fields: the per-event read's slot. */
  readonly readId: number;
  readonly fields: readonly string[];
  /** Or a comparison with a literal, decided per event with the rules it shares it with. */
  readonly expected: LeadingEquality['expected'] | ThresholdExpectation;
  /** The field reads the same text on the wire event as in the CEL variable (NOT_AS_ON_THE_WIRE). */
  readonly onWire: boolean;
};

/** A rule as the index keeps it: with its load order and its prebuilt CEL `rule` variable. */
export type IndexedRule = {
  readonly rule: CompiledRule;
  /** Position in the rule set, so results come out in file order whatever the lookup path. */
  readonly order: number;
  /** The CEL `rule` variable: `{id, revision, description, labels}`. */
  readonly variable: Readonly<Record<string, unknown>>;
  /** Its first condition's guards; empty when it has none (or the index was built without). */
  readonly guards: readonly RuleGuard[];
};

/**
 * Internal switches of the index (on by default), so the ingest bench can measure their effect.
 * Results are the same either way.
 */
export type IndexTuning = {
  /** Skip rules whose first condition a guard shows false (RuleGuard). */
  readonly guards?: boolean;
  /**
   * Counting matches in place (evaluate's matchCounts), decide the rules whose guards test one
   * field the same way with one lookup per event (rule-index-groups.ts). Needs guards.
   */
  readonly groups?: boolean;
  /**
   * Skip rules whose first condition compares a subexpression over `event` with a literal that
   * the event's value fails, found by one binary search per event (threshold-guards.ts). Needs
   * guards.
   */
  readonly thresholds?: boolean;
};

/**
 * Rules looked up by trigger kind and template (`Module:Entity`), so evaluating an event only
 * touches the rules that watch its template: the cost does not grow with unrelated rules.
 * Build it once per rule set (`indexRules`), evaluate many events with it.
 */
export type RuleIndex = {
  readonly kind: 'rule-index';
  /** Every rule, in load order. */
  readonly rules: readonly IndexedRule[];
  /** `created|Module:Entity`, `exercised|…`, `archived|…` → the rules watching that template. */
  readonly byTrigger: ReadonlyMap<string, readonly IndexedRule[]>;
  /** The same keys with an interface's `Module:Entity` → the rules watching that interface. */
  readonly byInterface: ReadonlyMap<string, readonly IndexedRule[]>;
  readonly schedules: readonly IndexedRule[];
  /** IndexTuning.groups. */
  readonly groups: boolean;
};

export type TriggerKeyKind = 'created' | 'exercised' | 'archived';

export function triggerIndexKey(kind: TriggerKeyKind, qualifiedName: string): string {
  return `${kind}|${qualifiedName}`;
}

const cache = new WeakMap<object, RuleIndex>();

/**
 * Indexes a rule set (or a list of rules). Cached per rule set, so calling it again is cheap
 * (`tuning`, for the bench, builds a fresh index).
 */
export function indexRules(
  rules: RuleSet | readonly CompiledRule[],
  tuning?: IndexTuning,
): RuleIndex {
  const cached = tuning === undefined ? cache.get(rules) : undefined;
  if (cached !== undefined) return cached;
  const withGuards = tuning?.guards ?? true;
  const list: readonly CompiledRule[] = 'rules' in rules ? rules.rules : rules;
  const guardIds: GuardIds = { verdicts: new Map(), reads: new Map() };
  const thresholds: ThresholdTable | undefined =
    withGuards && (tuning?.thresholds ?? true) ? { rules: list, checks: undefined } : undefined;
  const indexed = list.map((rule, order) => ({
    rule,
    order,
    variable: ruleVariable(rule),
    guards: withGuards
      ? guardsOf(
          rule,
          guardIds,
          thresholds !== undefined && mayHaveThresholds(rule)
            ? { kind: 'threshold', table: thresholds, order }
            : undefined,
        )
      : NO_GUARDS,
  }));
  const byTrigger = new Map<string, IndexedRule[]>();
  const byInterface = new Map<string, IndexedRule[]>();
  const schedules: IndexedRule[] = [];
  for (const entry of indexed) {
    const trigger = entry.rule.trigger;
    if (trigger.kind === 'schedule') {
      schedules.push(entry);
      continue;
    }
    const key = triggerIndexKey(trigger.kind, trigger.template.qualifiedName);
    const map = trigger.refKind === 'interface' ? byInterface : byTrigger;
    const bucket = map.get(key);
    if (bucket === undefined) map.set(key, [entry]);
    else bucket.push(entry);
  }
  const index: RuleIndex = Object.freeze({
    kind: 'rule-index',
    rules: Object.freeze(indexed),
    byTrigger,
    byInterface,
    schedules: Object.freeze(schedules),
    groups: withGuards && (tuning?.groups ?? true),
  });
  if (tuning === undefined) cache.set(rules, index);
  return index;
}

const NO_GUARDS: readonly RuleGuard[] = Object.freeze([]);
const NO_FIELDS: readonly string[] = Object.freeze([]);

/**
 * The guards of an event rule's first condition. Only the first: a later condition runs only
 * when the earlier ones held, and skipping it could hide their errors. Not below `event.view`,
 * which is a different value per interface.
 */
/** Guard ids given so far: by field and expectation (RuleGuard.id), by field (readId). */
type GuardIds = { readonly verdicts: Map<string, number>; readonly reads: Map<string, number> };

function guardsOf(
  rule: CompiledRule,
  ids: GuardIds,
  thresholds: ThresholdExpectation | undefined,
): readonly RuleGuard[] {
  const first = rule.when[0];
  if (rule.trigger.kind === 'schedule' || first === undefined) return NO_GUARDS;
  const equalities: RuleGuard[] = first.program.equalities
    .filter((e) => e.variable === 'event' && e.fields.length > 0 && e.fields[0] !== 'view')
    .map((e) => {
      const key = e.fields.join('.');
      const same = JSON.stringify([key, e.expected]);
      const id = idOf(ids.verdicts, same);
      const readId = idOf(ids.reads, key);
      const onWire = !NOT_AS_ON_THE_WIRE.has(e.fields[0]!);
      return Object.freeze({ id, key, readId, fields: e.fields, expected: e.expected, onWire });
    });
  // After the equalities: those read the wire event, the thresholds its CEL variable.
  const guards =
    thresholds === undefined
      ? equalities
      : [
          ...equalities,
          Object.freeze({
            id: idOf(ids.verdicts, `thresholds of rule ${thresholds.order}`),
            key: '',
            readId: -1,
            fields: NO_FIELDS,
            expected: thresholds,
            onWire: false,
          }),
        ];
  return guards.length === 0 ? NO_GUARDS : Object.freeze(guards);
}

function idOf(ids: Map<string, number>, key: string): number {
  let id = ids.get(key);
  if (id === undefined) {
    id = ids.size;
    ids.set(key, id);
  }
  return id;
}

const variables = new WeakMap<CompiledRule, Readonly<Record<string, unknown>>>();

/** The CEL `rule` variable of a rule (revision as a CEL int, so `rule.revision + 1` works). */
export function ruleVariable(rule: CompiledRule): Readonly<Record<string, unknown>> {
  let variable = variables.get(rule);
  if (variable === undefined) {
    variable = Object.freeze({
      id: rule.id,
      revision: BigInt(rule.revision),
      description: rule.description,
      labels: rule.labels,
    });
    variables.set(rule, variable);
  }
  return variable;
}

export function isRuleIndex(x: unknown): x is RuleIndex {
  return (x as { kind?: unknown } | null)?.kind === 'rule-index';
}
