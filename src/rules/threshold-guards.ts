import { BAIL, order, type Closure } from './cel/closure-parts.js';
import { mayCompare, type LeadingThreshold, type ThresholdOp } from './cel/leading-thresholds.js';
import type { CompiledRule } from './compiled-rule.js';

/**
 * Rules decided by one comparison per event: the rules of an index whose first `when` condition
 * hinges on comparing one subexpression over `event` with a literal the same way
 * (leading-thresholds.ts: `decimal(event.createArgument.amount) * 2 > decimal("3800")`, and the
 * same with `"3809"`, …) form a family. Its literals are sorted when the index is built; per
 * event the subexpression is computed once (shared by the families of the same subexpression)
 * and one binary search finds how many literals it passes (the cut). Each rule's guard then
 * compares its literal's rank with the cut: a rule whose comparison is false is skipped without
 * CEL and counted as its first condition false, exactly what evaluating it gives. Where the
 * closures do not decide the value or the comparison (a missing field, an amount that is not a
 * decimal, another type), nothing is decided and the rule is evaluated as written.
 *
 * The families are made when the first event asks (ThresholdTable), not when the index is built:
 * a warm start restores programs without reading their forms, and should not read them for this.
 */
export type ThresholdFamily = {
  /** Slot of the event's cut (ThresholdReads.cuts). */
  readonly id: number;
  /** Slot of the subexpression's value, shared by the families of one subexpression. */
  readonly valueId: number;
  readonly subject: Closure;
  /** `subject op literal`, as the comparison is written once its sides are put so. */
  readonly op: ThresholdOp;
  /** The literal was written on the left: compare in that order, as the closure does. */
  readonly flipped: boolean;
  /** Every distinct literal of the family, in ascending order. */
  readonly literals: readonly unknown[];
};

/** One threshold of a rule: its family and its literal's rank. */
export type ThresholdCheck = {
  readonly family: ThresholdFamily;
  /** Position of the rule's literal in the family's sorted literals. */
  readonly rank: number;
};

/** The rules of an index and, once an event asked, the threshold checks of each by position. */
export type ThresholdTable = {
  readonly rules: readonly CompiledRule[];
  checks: (readonly ThresholdCheck[])[] | undefined;
};

/** What a rule's threshold guard (RuleGuard.expected) holds: its index's table, its position. */
export type ThresholdExpectation = {
  readonly kind: 'threshold';
  readonly table: ThresholdTable;
  readonly order: number;
};

/** Whether the rule's first condition can have thresholds (a guard is made for it then). */
export function mayHaveThresholds(rule: CompiledRule): boolean {
  const program = rule.when[0]?.program;
  return (
    rule.trigger.kind !== 'schedule' &&
    program?.thresholds !== undefined &&
    mayCompare(program.source)
  );
}

/** The per-event reads of the threshold guards: values by valueId, cuts by family id. */
export type ThresholdReads = {
  readonly values: unknown[];
  readonly cuts: (number | undefined)[];
  /** The subexpressions' variables (`{ event }`), one object for the event's families. */
  readonly input: { event: unknown };
};

/** A family's cut when the event decides nothing (the rules are evaluated). */
const UNDECIDED = -1;

/** The thresholds of one rule's first condition, with the key of its family. */
export type RuleThresholds = readonly {
  readonly threshold: LeadingThreshold;
  readonly family: string;
}[];

/** The thresholds of an event rule's first condition (none for schedule rules). */
export function thresholdsOf(rule: CompiledRule): RuleThresholds {
  const first = rule.when[0];
  if (rule.trigger.kind === 'schedule' || first === undefined) return [];
  const found = first.program.thresholds?.() ?? [];
  return found.map((threshold) => ({ threshold, family: thresholdFamilyKey(threshold) }));
}

/** The thresholds that share a family: one subexpression, compared the same way with one kind. */
export function thresholdFamilyKey(t: LeadingThreshold): string {
  return JSON.stringify([t.key, t.op, t.literal.type, t.flipped]);
}

/**
 * The checks of every rule's thresholds, in rule order: the families made over all of them
 * (literals sorted, ranks given).
 */
export function thresholdChecks(perRule: readonly RuleThresholds[]): (readonly ThresholdCheck[])[] {
  type Draft = { threshold: LeadingThreshold; literals: unknown[] };
  const drafts = new Map<string, Draft>();
  for (const list of perRule) {
    for (const { threshold, family } of list) {
      let draft = drafts.get(family);
      if (draft === undefined) {
        draft = { threshold, literals: [] };
        drafts.set(family, draft);
      }
      draft.literals.push(threshold.literal.value);
    }
  }
  const valueIds = new Map<string, number>();
  const families = new Map<string, ThresholdFamily>();
  for (const [key, { threshold, literals }] of drafts) {
    const sorted = literals.sort((a, b) => order(a, b)!);
    const distinct = sorted.filter((x, i) => i === 0 || order(sorted[i - 1], x) !== 0);
    let valueId = valueIds.get(threshold.key);
    if (valueId === undefined) {
      valueId = valueIds.size;
      valueIds.set(threshold.key, valueId);
    }
    families.set(
      key,
      Object.freeze({
        id: families.size,
        valueId,
        subject: threshold.subject,
        op: threshold.op,
        flipped: threshold.flipped,
        literals: Object.freeze(distinct),
      }),
    );
  }
  return perRule.map((list) =>
    list.map(({ threshold, family: key }) => {
      const family = families.get(key)!;
      return Object.freeze({ family, rank: rankOf(family.literals, threshold.literal.value) });
    }),
  );
}

/** The position of `literal` in the sorted distinct `literals` (it is one of them). */
function rankOf(literals: readonly unknown[], literal: unknown): number {
  let lo = 0;
  let hi = literals.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (order(literals[mid], literal)! < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether the guard shows its rule's first condition false: the event's value of a family's
 * subexpression fails one of the rule's comparisons. `event` is the rule's CEL `event` variable.
 */
export function thresholdRejects(
  expected: ThresholdExpectation,
  event: Readonly<Record<string, unknown>>,
  reads: ThresholdReads,
): boolean {
  return checksReject(checksOf(expected), event, reads);
}

/** The rule's threshold checks; the first ask makes those of every rule of the index. */
export function checksOf(expected: ThresholdExpectation): readonly ThresholdCheck[] {
  const table = expected.table;
  table.checks ??= thresholdChecks(table.rules.map(thresholdsOf));
  return table.checks[expected.order]!;
}

/** Whether one of `checks` fails on the event (see thresholdRejects). */
export function checksReject(
  checks: readonly ThresholdCheck[],
  event: Readonly<Record<string, unknown>>,
  reads: ThresholdReads,
): boolean {
  for (let i = 0; i < checks.length; i++) {
    const { family, rank } = checks[i]!;
    let cut = reads.cuts[family.id];
    if (cut === undefined) {
      cut = cutOf(family, event, reads);
      reads.cuts[family.id] = cut;
    }
    if (cut === UNDECIDED) continue;
    const passes = family.op === '>' || family.op === '>=' ? rank < cut : rank >= cut;
    if (!passes) return true;
  }
  return false;
}

/**
 * How many of the family's literals, from the lowest, are in the prefix where `x > literal`
 * (`>`, `<=`) or `x >= literal` (`>=`, `<`) holds; UNDECIDED when the closures cannot compare.
 */
function cutOf(
  family: ThresholdFamily,
  event: Readonly<Record<string, unknown>>,
  reads: ThresholdReads,
): number {
  let x = reads.values[family.valueId];
  if (x === undefined) {
    try {
      reads.input.event = event;
      x = family.subject(reads.input);
    } catch {
      x = BAIL;
    }
    reads.values[family.valueId] = x;
  }
  if (x === BAIL) return UNDECIDED;
  const inclusive = family.op === '>=' || family.op === '<';
  const literals = family.literals;
  let lo = 0;
  let hi = literals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    // In the order the comparison is written, as its closure orders it (order is not symmetric
    // in what it decides: an int against a decimal is left to cel-js).
    const c = family.flipped ? order(literals[mid], x) : order(x, literals[mid]);
    if (c === null) return UNDECIDED;
    const sign = family.flipped ? -c : c;
    if (sign > 0 || (inclusive && sign === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
