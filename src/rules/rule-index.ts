import type { CompiledRule, RuleSet } from './compiled-rule.js';

/** A rule as the index keeps it: with its load order and its prebuilt CEL `rule` variable. */
export type IndexedRule = {
  readonly rule: CompiledRule;
  /** Position in the rule set, so results come out in file order whatever the lookup path. */
  readonly order: number;
  /** The CEL `rule` variable: `{id, revision, description, labels}`. */
  readonly variable: Readonly<Record<string, unknown>>;
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
};

export type TriggerKeyKind = 'created' | 'exercised' | 'archived';

export function triggerIndexKey(kind: TriggerKeyKind, qualifiedName: string): string {
  return `${kind}|${qualifiedName}`;
}

const cache = new WeakMap<object, RuleIndex>();

/** Indexes a rule set (or a list of rules). Cached per rule set, so calling it again is cheap. */
export function indexRules(rules: RuleSet | readonly CompiledRule[]): RuleIndex {
  const cached = cache.get(rules);
  if (cached !== undefined) return cached;
  const list: readonly CompiledRule[] = 'rules' in rules ? rules.rules : rules;
  const indexed = list.map((rule, order) => ({ rule, order, variable: ruleVariable(rule) }));
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
  });
  cache.set(rules, index);
  return index;
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
