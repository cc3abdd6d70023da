import { sha256Hex } from '../core/sha256-hex.js';
import type { CompiledRule, RuleSet } from '../rules/compiled-rule.js';

/** One rule as a reload reports it. */
export type RuleVersion = {
  readonly id: string;
  readonly revision: number;
  /** See `ruleContentHash`. */
  readonly hash: string;
};

/** What a reload changes, by rule id. */
export type RuleSetDiff = {
  readonly added: readonly RuleVersion[];
  readonly removed: readonly RuleVersion[];
  /** Same id, other content (the new version). */
  readonly changed: readonly RuleVersion[];
  readonly unchanged: number;
};

const hashes = new WeakMap<CompiledRule, string>();

/**
 * 12 hex characters of the sha256 of what the rule does: its trigger, conditions, actions,
 * options and flags as written. Compiled programs and source positions are left out, so moving
 * a rule within its file, or to another file, is not a change.
 */
export function ruleContentHash(rule: CompiledRule): string {
  let h = hashes.get(rule);
  if (h === undefined) {
    h = sha256Hex(stableJson(rule)).slice(0, 12);
    hashes.set(rule, h);
  }
  return h;
}

export function ruleVersion(rule: CompiledRule): RuleVersion {
  return { id: rule.id, revision: rule.revision, hash: ruleContentHash(rule) };
}

export function diffRuleSets(before: RuleSet, after: RuleSet): RuleSetDiff {
  const old = new Map(before.rules.map((r) => [r.id, r]));
  const added: RuleVersion[] = [];
  const changed: RuleVersion[] = [];
  let unchanged = 0;
  for (const rule of after.rules) {
    const previous = old.get(rule.id);
    old.delete(rule.id);
    if (previous === undefined) added.push(ruleVersion(rule));
    else if (ruleContentHash(previous) !== ruleContentHash(rule)) changed.push(ruleVersion(rule));
    else unchanged += 1;
  }
  const removed = [...old.values()].map(ruleVersion);
  return { added, removed, changed, unchanged };
}

/**
 * `diffRuleSets(before, after)`, computed when one of its fields is first read: hashing every
 * rule of both sets is a sizeable part of a start with many rules, and the rules handed over
 * before the bot starts are usually not diffed by anyone.
 */
export function lazyRuleSetDiff(before: RuleSet, after: RuleSet): RuleSetDiff {
  let diff: RuleSetDiff | undefined;
  const get = (): RuleSetDiff => (diff ??= diffRuleSets(before, after));
  const field = (key: keyof RuleSetDiff): PropertyDescriptor => ({
    enumerable: true,
    get: () => get()[key],
  });
  return Object.defineProperties({} as RuleSetDiff, {
    added: field('added'),
    removed: field('removed'),
    changed: field('changed'),
    unchanged: field('unchanged'),
  });
}

export function isEmptyDiff(diff: RuleSetDiff): boolean {
  return diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0;
}

const SKIPPED_KEYS: ReadonlySet<string> = new Set(['program', 'pos', 'cronSpec']);

function stableJson(value: unknown): string {
  return JSON.stringify(value, (key, v: unknown) => {
    if (SKIPPED_KEYS.has(key)) return undefined;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, o[k]]),
      );
    }
    return v;
  });
}
