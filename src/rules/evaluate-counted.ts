import type { CompiledRule } from './compiled-rule.js';
import type { Intent, RuleEvaluationError } from './evaluation-result.js';
import { celVariablesOf, eventVariableOf, type TransactionInfo } from './event-variable.js';
import { fireRule, renderActions } from './fire-rule.js';
import { emptiedGuardReads, guardFails, readText, type GuardReads } from './guards.js';
import type { AnyEvent, EventPlan } from './match-event.js';
import { witnessedBy } from './match-event.js';
import type { IndexedRule, RuleIndex } from './rule-index.js';
import {
  countGroupHit,
  settleMatchCountsOf,
  tallyOf,
  visitPlanOf,
  type RuleGroup,
  type RuleVisit,
} from './rule-index-groups.js';

/** Match counters of one rule index, by rule position (IndexedRule.order). */
export type MatchCounts = {
  /** Events whose trigger each rule matched (read them after settleMatchCounts). */
  readonly matched: Float64Array;
  /** Of those, the events where a `when` condition was false (the same). */
  readonly conditionsFalse: Float64Array;
  /** Matches counted, all rules together. */
  total: number;
  /** A rule's first match (its counters are made then, in the order rules first match). */
  readonly first: (order: number) => void;
};

/**
 * Brings `matched` and `conditionsFalse` up to date: evaluate counts a group of rules that one
 * lookup decides once per event (rule-index-groups.ts), and adds that to each rule's counters
 * here. Call before reading them.
 */
export function settleMatchCounts(counts: MatchCounts): void {
  settleMatchCountsOf(counts);
}

export function countInPlace(counts: MatchCounts, order: number, conditionFalse: boolean): void {
  counts.total += 1;
  const matched = counts.matched[order]!;
  counts.matched[order] = matched + 1;
  if (matched === 0) counts.first(order);
  if (conditionFalse) counts.conditionsFalse[order] = counts.conditionsFalse[order]! + 1;
}

/** What evaluateCounted appends to. */
export type CountedResults = {
  readonly intents: Intent[];
  readonly errors: RuleEvaluationError[];
};

/** The event evaluateCounted is given, and what its rules share. */
export type CountedEvent = {
  readonly index: RuleIndex;
  readonly plan: EventPlan;
  /** The candidates of `plan` whose trigger the event matches (triggerMatchedCandidates). */
  readonly candidates: readonly IndexedRule[];
  readonly event: AnyEvent;
  readonly transaction: TransactionInfo;
  readonly parties: Readonly<Record<string, string>>;
  readonly now: Date;
};

/**
 * The bot's hot path (evaluate with matchCounts, an index without interface rules): the rules of
 * one event, the groups among them decided by one lookup each (rule-index-groups.ts), the match
 * counters kept in place. Returns null when done; the groups to count one by one, when the event
 * reaches a group whose rules have not matched before (so each rule's counters are made in the
 * order the rules first match, as evaluate without groups makes them): nothing is counted or
 * evaluated then, and the caller evaluates the event rule by rule and calls groupsCounted.
 */
export function evaluateCounted(
  e: CountedEvent,
  counts: MatchCounts,
  out: CountedResults,
): readonly RuleGroup[] | null {
  const plan = visitPlanOf(e.index, e.candidates);
  const tally = tallyOf(counts, e.index);
  const { event, parties } = e;
  const run: EventRun = {
    e,
    counts,
    out,
    aliases: plan.aliases,
    known: 0,
    seen: 0,
    reads: emptiedGuardReads(e.index),
    eventVariable: undefined,
    variables: undefined,
    fired: undefined,
  };
  if (tally.ready[plan.id] !== true) {
    const reached = plan.items.filter((i) => i.group !== null && sees(run, i.aliasId));
    if (reached.some((i) => tally.announced[i.group!.id] !== true)) {
      return reached.map((i) => i.group!);
    }
    if (plan.groups.every((g) => tally.announced[g.id] === true)) tally.ready[plan.id] = true;
  }
  const wire = event as unknown as Readonly<Record<string, unknown>>;
  // Indexed loops in this file: an array `for…of` left unoptimised allocates an iterator result
  // per step, and this runs for every rule of every event.
  const items = plan.items;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (!sees(run, item.aliasId)) continue;
    const group = item.group;
    if (group === null) {
      visit(run, item.rule!);
      continue;
    }
    const text = readText(run.reads, group.readId, group.fields, wire);
    const selected = text === null ? null : group.select(text, parties);
    if (selected === null) {
      const members = group.members;
      for (let m = 0; m < members.length; m++) visit(run, members[m]!);
      continue;
    }
    countGroupHit(tally, group);
    counts.total += group.members.length;
    for (let m = 0; m < selected.length; m++) visit(run, selected[m]!);
  }
  const fired = run.fired;
  if (fired !== undefined) {
    // Visited by group, not in load order: results come out in load order all the same.
    if (fired.length > 1) fired.sort((a, b) => a.order - b.order);
    for (let f = 0; f < fired.length; f++) {
      const { intents, error } = fired[f]!;
      for (let n = 0; n < intents.length; n++) out.intents.push(intents[n]!);
      if (error !== null) out.errors.push(error);
    }
  }
  return null;
}

/** One event's evaluation in evaluateCounted: what its rules share. */
type EventRun = {
  readonly e: CountedEvent;
  readonly counts: MatchCounts;
  readonly out: CountedResults;
  readonly aliases: readonly string[];
  /** Whether each alias of the plan sees the event, asked once: bit i known, bit i seen. */
  known: number;
  seen: number;
  readonly reads: GuardReads;
  /** Built when the first rule gets past its guards, and shared by the event's rules. */
  eventVariable: Readonly<Record<string, unknown>> | undefined;
  /** The CEL variables, made for the first rule evaluated; then only `rule` changes. */
  variables: Record<string, unknown> | undefined;
  /** The rules that gave intents or an error. */
  fired:
    { order: number; intents: readonly Intent[]; error: RuleEvaluationError | null }[] | undefined;
};

function sees(run: EventRun, aliasId: number): boolean {
  const bit = aliasId < 30 ? 1 << aliasId : 0;
  if ((run.known & bit) !== 0) return (run.seen & bit) !== 0;
  const yes = witnessedBy(run.aliases[aliasId]!, run.e.event.witnessParties, run.e.parties);
  run.known |= bit;
  if (yes) run.seen |= bit;
  return yes;
}

function variableOf(run: EventRun): Readonly<Record<string, unknown>> {
  return (run.eventVariable ??= eventVariableOf(
    run.e.event,
    run.e.transaction,
    run.e.plan.fieldReads,
  ));
}

/** One rule of the event: its guards, its conditions, its actions; counted. */
function visit(run: EventRun, { entry, guards, counted }: RuleVisit): void {
  const { counts, e } = run;
  const order = entry.order;
  if (guards.length > 0 && guardFails(guards, e.event, variableOf, run, e.parties, run.reads)) {
    // A counted visit is already counted false (its group's hit).
    if (!counted) countInPlace(counts, order, true);
    return;
  }
  let variables = run.variables;
  if (variables === undefined) {
    variables = celVariablesOf(variableOf(run), e.parties, e.now, entry.variable);
    run.variables = variables;
  } else variables.rule = entry.variable;
  const when = whenOutcome(entry.rule, variables);
  if (when === FALSE) {
    if (!counted) countInPlace(counts, order, true);
    return;
  }
  const firing = {
    variables,
    parties: e.parties,
    triggerKey: { kind: 'event', updateId: e.transaction.updateId, nodeId: e.event.nodeId },
    offset: e.event.offset,
    contractId: null,
  } as const;
  // Every condition held: the actions, as fireRule renders them then. Otherwise fireRule
  // evaluates the rule again (pure) and reports its error.
  let intents: readonly Intent[];
  let error: RuleEvaluationError | null;
  let conditionFalse = false;
  if (when === HELD) ({ intents, error } = renderActions(entry.rule, firing));
  else {
    const result = fireRule(entry.rule, firing);
    ({ intents, conditionFalse } = result);
    error = result.explanation.error;
  }
  if (!counted) countInPlace(counts, order, conditionFalse);
  else if (!conditionFalse) counts.conditionsFalse[order] = counts.conditionsFalse[order]! - 1;
  if (intents.length > 0 || error !== null) (run.fired ??= []).push({ order, intents, error });
}

const FALSE = 0;
const HELD = 1;
const FAILED = 2;

/**
 * How a rule's `when` comes out, as fireRule finds it, without its explanation: FALSE (a
 * condition gave false, the earlier ones true: where most rules an event reaches stop), HELD
 * (every condition gave true), FAILED (one threw or gave a non-boolean).
 */
function whenOutcome(
  rule: CompiledRule,
  variables: Readonly<Record<string, unknown>>,
): typeof FALSE | typeof HELD | typeof FAILED {
  const when = rule.when;
  for (let i = 0; i < when.length; i++) {
    let value: unknown;
    try {
      value = when[i]!.program.evaluate(variables);
    } catch {
      return FAILED;
    }
    if (value !== true) return value === false ? FALSE : FAILED;
  }
  return HELD;
}

/** After the caller counted the rules of `groups` one by one: the groups count as one from now. */
export function groupsCounted(
  counts: MatchCounts,
  index: RuleIndex,
  groups: readonly RuleGroup[],
): void {
  const tally = tallyOf(counts, index);
  for (const group of groups) tally.announced[group.id] = true;
}
