import type { TriggerKey } from '../core/trigger-key.js';
import type { CreatedEvent, Event, JsTransaction } from '../ledger/wire/wire-types.js';
import type { EventTrigger, RuleSet } from './compiled-rule.js';
import type {
  EvaluationResult,
  Explanation,
  Intent,
  RuleEvaluationError,
} from './evaluation-result.js';
import {
  celVariablesOf,
  eventVariableOf,
  withView,
  type TransactionInfo,
} from './event-variable.js';
import { fireRule, firstConditionFalse } from './fire-rule.js';
import {
  eventPlanFor,
  matchEvent,
  notMatched,
  TEMPLATE_MATCH,
  triggerMatchedCandidates,
  unwrapEvent,
  witnessedBy,
  type AnyEvent,
  type EventKind,
  type EventPlan,
  type Match,
} from './match-event.js';
import { viewFailure, viewValueOf, type PackageNameOf } from './match-interface.js';
import {
  countInPlace,
  evaluateCounted,
  groupsCounted,
  type MatchCounts,
} from './evaluate-counted.js';
import { guardFails, newGuardReads, type GuardReads } from './guards.js';
import { indexRules, isRuleIndex, type IndexedRule, type RuleIndex } from './rule-index.js';
import type { RuleGroup } from './rule-index-groups.js';

export type { TransactionInfo } from './event-variable.js';
export { settleMatchCounts, type MatchCounts } from './evaluate-counted.js';

/** One event of a transaction from the update stream, as the wire carries it. */
export type EventInput = {
  readonly transaction: TransactionInfo;
  /** `{CreatedEvent: …}`, `{ArchivedEvent: …}` or `{ExercisedEvent: …}`. */
  readonly event: Event;
};

export type EvaluationContext = {
  /** Party alias → party id, from the bot config. */
  readonly parties: Readonly<Record<string, string>>;
  /** The CEL `now`: given, never read from a clock. `today` is its UTC midnight. */
  readonly now: Date;
};

export type EvaluateOptions = {
  /**
   * Which rules get an explanation. `candidates` (the default, and the fast path): the rules
   * indexed under the event's trigger kind and template. `all`: every rule, including those on
   * other templates and schedule rules; for debugging ("why did my rule not fire?").
   */
  readonly explain?: 'candidates' | 'all';
  /**
   * The name of the package with this id (PackageCatalogue.packageNameOf), to match the
   * package-id interface ids events carry against `#name` interface references. Without it, or
   * for an id it does not know, an interface rule matches by `Module:Entity` alone.
   */
  readonly packageNameOf?: PackageNameOf;
  /**
   * The bot's hot path: called for each rule whose trigger matched the event (`conditionFalse`:
   * a `when` condition was false) instead of explaining every rule, and `explanations` stays
   * empty. The rules whose trigger cannot match are not looked at. Ignored with `explain: all`.
   */
  readonly countMatch?: (ruleId: string, conditionFalse: boolean) => void;
  /**
   * countMatch without a call per matched rule: the counts are kept in place, by the rule's
   * position in the index (the bot's BotMetrics.matchCountsFor). Takes countMatch's place.
   */
  readonly matchCounts?: MatchCounts;
};

/**
 * Evaluates the rules against one ledger event. Pure: no I/O, no clock. Never throws for a rule's
 * sake: an expression that fails is a per-event error in `errors` (and in that rule's
 * explanation), and the other rules are evaluated as usual.
 *
 * Matching:
 * - `created` rules match CreatedEvents; `exercised` rules match ExercisedEvents of their
 *   `choice` (and `consuming`, when set).
 * - `archived` rules match ArchivedEvents (ACS_DELTA streams) and consuming ExercisedEvents
 *   (LEDGER_EFFECTS streams, which carry no ArchivedEvent). A stream has one shape, so a rule
 *   fires once per archive either way; the archive and its exercise share the node id, so the
 *   commandId is the same too. In `event`, such a rule sees the fields of whichever event came:
 *   use the ones both have (contractId, templateId, packageName, witnessParties, offset, nodeId).
 * - The template must match (see templateMismatch), and the rule's party must be a witness.
 * - A rule on an interface matches by the interface ids the event carries (match-interface.ts):
 *   `interfaceViews` (created), `implementedInterfaces` (archived), `interfaceId` (exercised
 *   through the interface). A created event's rule sees that interface's view as `event.view`;
 *   a view that failed (`viewStatus`) is a rule error (INTERFACE_VIEW_FAILED) for that rule.
 *
 * Cost: a rule whose first condition a guard shows false (RuleGuard, rule-index.ts) is not
 * evaluated, and gets the explanation evaluating it would give; `decimal(x)`/`date(x)` of the
 * same text are converted once per event (ConversionMemo).
 *
 * CEL `event` is the wire event plus the transaction's `updateId`, `recordTime`, `effectiveAt`
 * (timestamps) and `workflowId`; `offset`, `nodeId` and `lastDescendantNodeId` are CEL ints and
 * `createdAt` a timestamp. Everything else is as on the wire (Daml Numeric and Int64 values are
 * text: compare them with `decimal()` or `int()`).
 */
export function evaluate(
  rules: RuleIndex | RuleSet,
  input: EventInput,
  context: EvaluationContext,
  options: EvaluateOptions = {},
): EvaluationResult {
  const out: Results = { intents: [], explanations: [], errors: [] };
  evaluateInto(isRuleIndex(rules) ? rules : indexRules(rules), input, context, options, out);
  return out;
}

type Results = {
  readonly intents: Intent[];
  readonly explanations: Explanation[];
  readonly errors: RuleEvaluationError[];
};

/** evaluate, appending to `out` (a transaction's events share one set of lists). */
function evaluateInto(
  index: RuleIndex,
  input: EventInput,
  context: EvaluationContext,
  options: EvaluateOptions,
  out: Results,
): void {
  const [kind, event] = unwrapEvent(input.event);
  if (event === undefined) return;
  const plan = eventPlanFor(index, kind, event);
  const counts = options.explain === 'all' ? undefined : options.matchCounts;
  if (counts !== undefined && counts.matched.length !== index.rules.length) {
    throw new Error('evaluate: matchCounts are of another rule index');
  }
  const countMatch =
    options.explain === 'all' || counts !== undefined ? undefined : options.countMatch;
  const counting = counts !== undefined || countMatch !== undefined;
  // Counting, with no interface rules, the trigger checks are made once per kind, template,
  // package and choice (triggerMatchedCandidates); only the party's view is left per rule.
  const byParty = counting && index.byInterface.size === 0;
  const candidates =
    options.explain === 'all'
      ? index.rules
      : byParty
        ? triggerMatchedCandidates(plan, kind, event)
        : plan.candidates;

  let counted: readonly RuleGroup[] | null = null;
  if (counts !== undefined && byParty && index.groups) {
    const { parties, now } = context;
    const e = { index, plan, candidates, event, transaction: input.transaction, parties, now };
    counted = evaluateCounted(e, counts, out);
    if (counted === null) return;
  }
  evaluateEach(index, input, context, options, out, { kind, event, plan, candidates, counts });
  if (counted !== null) groupsCounted(counts!, index, counted);
}

/** evaluateInto rule by rule: every candidate asks its own guards. */
function evaluateEach(
  index: RuleIndex,
  input: EventInput,
  context: EvaluationContext,
  options: EvaluateOptions,
  out: Results,
  e: {
    readonly kind: EventKind;
    readonly event: AnyEvent;
    readonly plan: EventPlan;
    readonly candidates: readonly IndexedRule[];
    readonly counts: MatchCounts | undefined;
  },
): void {
  const { kind, event, plan, candidates, counts } = e;
  const countMatch =
    options.explain === 'all' || counts !== undefined ? undefined : options.countMatch;
  const counting = counts !== undefined || countMatch !== undefined;
  const byParty = counting && index.byInterface.size === 0;
  const { intents, explanations, errors } = out;
  // Built once per event, when the first rule matches, and shared by every rule it matches.
  let eventVariable: Readonly<Record<string, unknown>> | undefined;
  /** Interface id → the event variable with that interface's view (created events). */
  let withViews: Map<string, Readonly<Record<string, unknown>>> | undefined;
  /**
   * The CEL variables, made for the first rule that gets evaluated and then only given each
   * rule's `event` (with its interface view) and `rule`: nothing keeps them past fireRule. They
   * carry the event's conversions (`decimal(…)`, `date(…)` of its fields), shared by its rules.
   */
  let variables: Record<string, unknown> | undefined;
  /** The trigger key of every intent of this event. */
  let triggerKey: TriggerKey | undefined;
  /** What the guards read of the event, once per event. */
  let guardReads: GuardReads | undefined;
  /** The last party alias asked about (byParty) and whether it sees the event; then the others. */
  let lastAlias: string | undefined;
  let lastSees = false;
  let witnessed: Map<string, boolean> | undefined;
  for (const { rule, variable, guards, order } of candidates) {
    let match: Match;
    if (byParty) {
      const alias = (rule.trigger as EventTrigger).party;
      if (alias !== lastAlias) {
        // Rules of one template mostly share their party: a Map only once a second one comes.
        let sees = lastAlias === undefined ? undefined : witnessed?.get(alias);
        if (sees === undefined) {
          sees = witnessedBy(alias, event.witnessParties, context.parties);
          if (lastAlias !== undefined) (witnessed ??= new Map()).set(alias, sees);
        }
        if (lastAlias !== undefined && witnessed?.has(lastAlias) !== true) {
          (witnessed ??= new Map()).set(lastAlias, lastSees);
        }
        lastAlias = alias;
        lastSees = sees;
      }
      if (!lastSees) continue;
      match = TEMPLATE_MATCH;
    } else {
      const found = matchEvent(rule, kind, event, context.parties, options.packageNameOf);
      if ('reason' in found) {
        if (!counting) explanations.push(notMatched(rule, found.reason, found.message));
        continue;
      }
      match = found;
    }
    if (
      guards.length > 0 &&
      // A created event's interface rules read their view: not what the guards look at.
      (kind !== 'created' || match.interfaceId === null) &&
      guardFails(
        guards,
        event,
        () => (eventVariable ??= eventVariableOf(event, input.transaction, plan.fieldReads)),
        undefined,
        context.parties,
        (guardReads ??= newGuardReads()),
      )
    ) {
      if (counts !== undefined) countInPlace(counts, order, true);
      else if (countMatch !== undefined) countMatch(rule.id, true);
      else explanations.push(firstConditionFalse(rule));
      continue;
    }
    if (eventVariable === undefined) {
      eventVariable = eventVariableOf(event, input.transaction, plan.fieldReads);
    }
    let eventValue = eventVariable;
    if (kind === 'created' && match.interfaceId !== null) {
      withViews ??= new Map();
      let viewed = withViews.get(match.interfaceId);
      if (viewed === undefined) {
        const view = viewValueOf(event as CreatedEvent, match.interfaceId);
        if ('failed' in view) {
          const explanation = viewFailure(rule, view.failed, null, rule.trigger.pos);
          if (counts !== undefined) countInPlace(counts, order, false);
          else if (countMatch !== undefined) countMatch(rule.id, false);
          else explanations.push(explanation);
          errors.push(explanation.error!);
          continue;
        }
        viewed = withView(eventVariable, view.value, plan.fieldReads);
        withViews.set(match.interfaceId, viewed);
      }
      eventValue = viewed;
    }
    if (variables === undefined) {
      variables = celVariablesOf(eventValue, context.parties, context.now, variable);
      triggerKey = { kind: 'event', updateId: input.transaction.updateId, nodeId: event.nodeId };
    } else {
      variables.event = eventValue;
      variables.rule = variable;
    }
    const result = fireRule(rule, {
      variables,
      parties: context.parties,
      triggerKey: triggerKey!,
      offset: event.offset,
      contractId: null,
    });
    if (counts !== undefined) countInPlace(counts, order, result.conditionFalse);
    else if (countMatch !== undefined) countMatch(rule.id, result.conditionFalse);
    else explanations.push(result.explanation);
    for (const intent of result.intents) intents.push(intent);
    if (result.explanation.error !== null) errors.push(result.explanation.error);
  }
}

/** Evaluates every event of a transaction, in order, and concatenates the results. */
export function evaluateTransaction(
  rules: RuleIndex | RuleSet,
  transaction: JsTransaction,
  context: EvaluationContext,
  options: EvaluateOptions = {},
): EvaluationResult {
  const index = isRuleIndex(rules) ? rules : indexRules(rules);
  const out: Results = { intents: [], explanations: [], errors: [] };
  for (const event of transaction.events) {
    evaluateInto(index, { transaction, event }, context, options, out);
  }
  return out;
}
