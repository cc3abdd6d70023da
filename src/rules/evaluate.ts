import type {
  ArchivedEvent,
  CreatedEvent,
  Event,
  ExercisedEvent,
  JsTransaction,
} from '../ledger/wire/wire-types.js';
import type { CompiledRule, EventTrigger, RuleSet } from './compiled-rule.js';
import type {
  EvaluationResult,
  Explanation,
  Intent,
  RuleEvaluationError,
  TriggerMismatch,
} from './evaluation-result.js';
import { fillMissingFields, mergeFieldTries, type FieldTrie } from './field-reads.js';
import { fireRule } from './fire-rule.js';
import { qualifiedNameOf, templateMismatch } from './match-template.js';
import {
  indexRules,
  isRuleIndex,
  triggerIndexKey,
  type IndexedRule,
  type RuleIndex,
} from './rule-index.js';

/** The transaction fields an event's rules see besides the event itself. */
export type TransactionInfo = Pick<
  JsTransaction,
  'updateId' | 'offset' | 'recordTime' | 'effectiveAt' | 'workflowId'
>;

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
};

type EventKind = 'created' | 'exercised' | 'archived';
type AnyEvent = CreatedEvent | ExercisedEvent | ArchivedEvent;

const DAY_MS = 86_400_000;

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
 * - Interface references are not matched against events in version 1: name the template.
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
  const index = isRuleIndex(rules) ? rules : indexRules(rules);
  const [kind, event] = unwrapEvent(input.event);
  if (event === undefined) return { intents: [], explanations: [], errors: [] };
  const candidates = options.explain === 'all' ? index.rules : candidatesFor(index, kind, event);

  const intents: Intent[] = [];
  const explanations: Explanation[] = [];
  const errors: RuleEvaluationError[] = [];
  let eventVariable: Readonly<Record<string, unknown>> | undefined;
  let today: Date | undefined;
  for (const { rule, variable } of candidates) {
    const mismatch = matchEvent(rule, kind, event, context.parties);
    if (mismatch !== null) {
      explanations.push(notMatched(rule, mismatch.reason, mismatch.message));
      continue;
    }
    eventVariable ??= eventVariableOf(event, input.transaction, fieldTrieFor(index, kind, event));
    today ??= utcMidnight(context.now);
    const result = fireRule(rule, {
      variables: {
        event: eventVariable,
        parties: context.parties,
        rule: variable,
        now: context.now,
        today,
      },
      parties: context.parties,
      triggerKey: { kind: 'event', updateId: input.transaction.updateId, nodeId: event.nodeId },
      offset: event.offset,
      contractId: null,
    });
    explanations.push(result.explanation);
    intents.push(...result.intents);
    if (result.explanation.error !== null) errors.push(result.explanation.error);
  }
  return { intents, explanations, errors };
}

/** Evaluates every event of a transaction, in order, and concatenates the results. */
export function evaluateTransaction(
  rules: RuleIndex | RuleSet,
  transaction: JsTransaction,
  context: EvaluationContext,
  options: EvaluateOptions = {},
): EvaluationResult {
  const index = isRuleIndex(rules) ? rules : indexRules(rules);
  const intents: Intent[] = [];
  const explanations: Explanation[] = [];
  const errors: RuleEvaluationError[] = [];
  for (const event of transaction.events) {
    const r = evaluate(index, { transaction, event }, context, options);
    intents.push(...r.intents);
    explanations.push(...r.explanations);
    errors.push(...r.errors);
  }
  return { intents, explanations, errors };
}

let lastNow: Date | undefined;
let lastToday: Date | undefined;

/** `today` for `now`; remembered, since a stream of events is usually evaluated with one `now`. */
function utcMidnight(now: Date): Date {
  if (now !== lastNow || lastToday === undefined) {
    lastToday = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
    lastNow = now;
  }
  return lastToday;
}

function unwrapEvent(event: Event): [EventKind, AnyEvent | undefined] {
  if ('CreatedEvent' in event) return ['created', event.CreatedEvent];
  if ('ExercisedEvent' in event) return ['exercised', event.ExercisedEvent];
  if ('ArchivedEvent' in event) return ['archived', event.ArchivedEvent];
  return ['created', undefined];
}

const NONE: readonly IndexedRule[] = [];

function candidatesFor(index: RuleIndex, kind: EventKind, event: AnyEvent): readonly IndexedRule[] {
  const name = qualifiedNameOf(event.templateId);
  const direct = index.byTrigger.get(triggerIndexKey(kind, name)) ?? NONE;
  if (kind !== 'exercised' || !(event as ExercisedEvent).consuming) return direct;
  const archived = index.byTrigger.get(triggerIndexKey('archived', name));
  if (archived === undefined) return direct;
  return [...direct, ...archived].sort((a, b) => a.order - b.order);
}

type Mismatch = { readonly reason: TriggerMismatch; readonly message: string };

function matchEvent(
  rule: CompiledRule,
  kind: EventKind,
  event: AnyEvent,
  parties: Readonly<Record<string, string>>,
): Mismatch | null {
  const trigger = rule.trigger;
  if (trigger.kind === 'schedule') {
    return {
      reason: 'other-event-kind',
      message: 'a schedule rule runs on its cron schedule, not on ledger events',
    };
  }
  const exercised = kind === 'exercised' ? (event as ExercisedEvent) : undefined;
  const kindMatches =
    trigger.kind === kind || (trigger.kind === 'archived' && exercised?.consuming === true);
  if (!kindMatches) {
    return {
      reason: 'other-event-kind',
      message: `the rule reacts to ${trigger.kind} events, this is ${article(kind)} ${kind} event`,
    };
  }
  const template = templateMismatch(trigger.template, event.templateId, event.packageName);
  if (template !== null) {
    return {
      reason: template,
      message:
        template === 'other-template'
          ? `the event is of template ${event.templateId}, the rule watches ${trigger.template.text}`
          : trigger.template.form === 'package-name'
            ? `the event's package is "${event.packageName}", the rule watches package "${trigger.template.packageName}"`
            : `the event's template ${event.templateId} is from another package than ${trigger.template.text}`,
    };
  }
  if (trigger.kind === 'exercised' && exercised !== undefined) {
    if (exercised.choice !== trigger.choice) {
      return {
        reason: 'other-choice',
        message: `the exercised choice is ${exercised.choice}, the rule watches ${trigger.choice}`,
      };
    }
    if (trigger.consuming !== null && exercised.consuming !== trigger.consuming) {
      return {
        reason: 'other-consuming',
        message: `the exercise is ${exercised.consuming ? '' : 'non-'}consuming, the rule wants ${trigger.consuming ? '' : 'non-'}consuming ones`,
      };
    }
  }
  return ruleGate(rule, trigger, event.witnessParties, parties);
}

/** The checks every matched trigger goes through last: enabled, and the party's view. */
export function ruleGate(
  rule: CompiledRule,
  trigger: EventTrigger | { readonly party: string },
  witnessParties: readonly string[],
  parties: Readonly<Record<string, string>>,
): Mismatch | null {
  if (!rule.enabled) {
    return {
      reason: 'rule-disabled',
      message: 'the rule is disabled (enabled: false)',
    };
  }
  const partyId = Object.hasOwn(parties, trigger.party) ? parties[trigger.party] : undefined;
  if (partyId === undefined) {
    return {
      reason: 'unknown-party',
      message: `the party alias "${trigger.party}" is not in the bot config's parties`,
    };
  }
  if (!witnessParties.includes(partyId)) {
    return {
      reason: 'party-not-witness',
      message: `${trigger.party} (${partyId}) does not see this event; its witnesses are ${witnessParties.join(', ') || 'none'}`,
    };
  }
  return null;
}

export function notMatched(
  rule: CompiledRule,
  reason: TriggerMismatch,
  message: string,
  contractId: string | null = null,
): Explanation {
  return {
    ruleId: rule.id,
    revision: rule.revision,
    pos: rule.pos,
    triggerMatched: false,
    mismatch: { reason, message },
    conditions: [],
    fired: false,
    intents: 0,
    error: null,
    contractId,
  };
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

/** The last few timestamps parsed: a transaction's events share their record and creation times. */
const recentTimes: { text: string; date: Date }[] = [];

/** A wire timestamp as a CEL timestamp; text that is not one stays text. */
export function timestampOf(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  for (const recent of recentTimes) if (recent.text === text) return recent.date;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return text;
  // CEL values are never mutated, so one Date can serve every event that has this time.
  const date = new Date(ms);
  if (recentTimes.length >= 4) recentTimes.pop();
  recentTimes.unshift({ text, date });
  return date;
}

function intOf(n: unknown): unknown {
  return typeof n === 'number' && Number.isSafeInteger(n) ? BigInt(n) : n;
}

/**
 * The CEL view of a wire event (or an active contract's CreatedEvent): ints and timestamps typed,
 * and the Daml fields in `fieldReads` that the participant left out as `null` (copied, see
 * field-reads.ts). Copied key by key: a spread followed by retyping fields (number → bigint)
 * sends V8 through a slow path that costs several microseconds per event.
 */
export function eventFieldsOf(
  event: AnyEvent,
  fieldReads: FieldTrie | null = null,
): Record<string, unknown> {
  const source = event as unknown as Readonly<Record<string, unknown>>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const value = source[key];
    switch (key) {
      case 'offset':
      case 'nodeId':
      case 'lastDescendantNodeId':
        out[key] = intOf(value);
        break;
      case 'createdAt':
        out[key] = timestampOf(value);
        break;
      default:
        out[key] = value;
    }
  }
  if (fieldReads !== null) {
    for (const [root, trie] of fieldReads.children) {
      if (Object.hasOwn(out, root)) out[root] = fillMissingFields(out[root], trie);
    }
  }
  return out;
}

function eventVariableOf(
  event: AnyEvent,
  tx: TransactionInfo,
  fieldReads: FieldTrie | null,
): Readonly<Record<string, unknown>> {
  const out = eventFieldsOf(event, fieldReads);
  out.updateId = tx.updateId;
  out.recordTime = timestampOf(tx.recordTime);
  out.effectiveAt = timestampOf(tx.effectiveAt);
  out.workflowId = tx.workflowId ?? '';
  return out;
}

const fieldTries = new WeakMap<RuleIndex, Map<string, FieldTrie | null>>();

/**
 * The Daml fields read by every rule that can see this event (its trigger kind and template),
 * merged: the event variable is built once and shared, so a field left out reads `null` for all
 * of them. Independent of `explain`, so rule tests see what the running bot sees.
 */
function fieldTrieFor(index: RuleIndex, kind: EventKind, event: AnyEvent): FieldTrie | null {
  const consuming = kind === 'exercised' && (event as ExercisedEvent).consuming;
  const key = `${kind}|${consuming}|${qualifiedNameOf(event.templateId)}`;
  let byKey = fieldTries.get(index);
  if (byKey === undefined) {
    byKey = new Map();
    fieldTries.set(index, byKey);
  }
  let trie = byKey.get(key);
  if (trie === undefined) {
    trie = mergeFieldTries(candidatesFor(index, kind, event).map((c) => c.rule.fieldReads));
    byKey.set(key, trie);
  }
  return trie;
}
