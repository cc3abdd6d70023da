import type {
  ArchivedEvent,
  CreatedEvent,
  Event,
  ExercisedEvent,
} from '../ledger/wire/wire-types.js';
import type { CompiledRule, EventTrigger } from './compiled-rule.js';
import type { Explanation, TriggerMismatch } from './evaluation-result.js';
import { mergeFieldTries, type FieldTrie } from './field-reads.js';
import {
  findInterface,
  interfaceIdsOf,
  interfaceMismatchMessage,
  type PackageNameOf,
} from './match-interface.js';
import { qualifiedNameOf, templateMismatch } from './match-template.js';
import { triggerIndexKey, type IndexedRule, type RuleIndex } from './rule-index.js';

/**
 * Which rules an event can fire, and why each one does not: the trigger kind, the template (or
 * for interface rules the interface, see match-interface.ts), the choice, and the rule's party.
 */

export type EventKind = 'created' | 'exercised' | 'archived';
export type AnyEvent = CreatedEvent | ExercisedEvent | ArchivedEvent;

/** An event's kind and body; an event of a kind this version does not know has no body. */
export function unwrapEvent(event: Event): [EventKind, AnyEvent | undefined] {
  if ('CreatedEvent' in event) return ['created', event.CreatedEvent];
  if ('ExercisedEvent' in event) return ['exercised', event.ExercisedEvent];
  if ('ArchivedEvent' in event) return ['archived', event.ArchivedEvent];
  return ['created', undefined];
}

type Mismatch = { readonly reason: TriggerMismatch; readonly message: string };

/** A matched trigger; for an interface rule, the id of the matched interface as the event has it. */
export type Match = { readonly interfaceId: string | null };

const NONE: readonly IndexedRule[] = [];
/** A matched template rule: one object for every match, none allocated per event. */
export const TEMPLATE_MATCH: Match = Object.freeze({ interfaceId: null });

/** The rule kinds an event can fire: a consuming exercise is an archive too. */
function ruleKindsOf(kind: EventKind, event: AnyEvent): readonly EventKind[] {
  return kind === 'exercised' && (event as ExercisedEvent).consuming
    ? ['exercised', 'archived']
    : [kind];
}

/**
 * The rules indexed under the event's template and under each interface it carries, in load
 * order.
 */
export function candidatesFor(
  index: RuleIndex,
  kind: EventKind,
  event: AnyEvent,
): readonly IndexedRule[] {
  const name = qualifiedNameOf(event.templateId);
  // The common case, on the hot path: no interface rules, not an archive-by-exercise.
  if (
    index.byInterface.size === 0 &&
    (kind !== 'exercised' || !(event as ExercisedEvent).consuming)
  ) {
    return index.byTrigger.get(triggerIndexKey(kind, name)) ?? NONE;
  }
  const lists: (readonly IndexedRule[])[] = [];
  for (const ruleKind of ruleKindsOf(kind, event)) {
    const direct = index.byTrigger.get(triggerIndexKey(ruleKind, name));
    if (direct !== undefined) lists.push(direct);
    if (index.byInterface.size === 0) continue;
    const seen = new Set<string>();
    for (const id of interfaceIdsOf(kind, event, ruleKind)) {
      const qn = qualifiedNameOf(id);
      if (seen.has(qn)) continue;
      seen.add(qn);
      const viaInterface = index.byInterface.get(triggerIndexKey(ruleKind, qn));
      if (viaInterface !== undefined) lists.push(viaInterface);
    }
  }
  if (lists.length === 0) return NONE;
  if (lists.length === 1) return lists[0]!;
  return [...new Set(lists.flat())].sort((a, b) => a.order - b.order);
}

/** Whether `rule` reacts to this event; why not when it does not. */
export function matchEvent(
  rule: CompiledRule,
  kind: EventKind,
  event: AnyEvent,
  parties: Readonly<Record<string, string>>,
  packageNameOf: PackageNameOf | undefined,
): Mismatch | Match {
  const match = matchTrigger(rule, kind, event, packageNameOf);
  if ('reason' in match || rule.trigger.kind === 'schedule') return match;
  return ruleGate(rule, rule.trigger, event.witnessParties, parties) ?? match;
}

/**
 * matchEvent without the last checks (ruleGate: enabled, the party's view): what the event's
 * kind, template or interfaces, choice and consuming decide.
 */
function matchTrigger(
  rule: CompiledRule,
  kind: EventKind,
  event: AnyEvent,
  packageNameOf: PackageNameOf | undefined,
): Mismatch | Match {
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
  let interfaceId: string | null = null;
  if (trigger.refKind === 'interface') {
    const ids = interfaceIdsOf(kind, event, trigger.kind);
    const found = findInterface(trigger.template, ids, packageNameOf);
    if ('mismatch' in found) {
      return {
        reason: found.mismatch,
        message: interfaceMismatchMessage(
          trigger.template,
          found.mismatch,
          kind,
          event.templateId,
          ids,
        ),
      };
    }
    interfaceId = found.id;
  } else {
    const template = templateMismatch(trigger.template, event.templateId, event.packageName);
    if (template !== null) {
      const isInterface = interfaceIdsOf(kind, event, trigger.kind).some(
        (id) => qualifiedNameOf(id) === trigger.template.qualifiedName,
      );
      return {
        reason: template,
        message:
          template === 'other-template'
            ? `the event is of template ${event.templateId}, the rule watches ${trigger.template.text}${isInterface ? `, as a template: ${trigger.template.qualifiedName} is an interface of this event, but the rules were loaded without the packages that say so (give them: --dar, --model or ledger.packages)` : ''}`
            : trigger.template.form === 'package-name'
              ? `the event's package is "${event.packageName}", the rule watches package "${trigger.template.packageName}"`
              : `the event's template ${event.templateId} is from another package than ${trigger.template.text}`,
      };
    }
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
  return interfaceId === null ? TEMPLATE_MATCH : { interfaceId };
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

const fieldTries = new WeakMap<RuleIndex, Map<string, FieldTrie | null>>();

/** The rules an event can fire and the fields they read (candidatesFor, fieldTrieFor). */
export type EventPlan = {
  readonly candidates: readonly IndexedRule[];
  readonly fieldReads: FieldTrie | null;
  /** triggerMatchedCandidates, remembered: package name → choice ('' unless exercised) → rules. */
  readonly triggerMatched?: Map<string, Map<string, readonly IndexedRule[]>>;
};

/** Kind (a consuming exercise apart) → templateId → plan, for an index without interface rules. */
const plans = new WeakMap<RuleIndex, Map<EventKind | 'consumed', Map<string, EventPlan>>>();
/** Distinct template ids remembered per kind before the cache starts over. */
const PLANS_MAX = 1024;

/**
 * candidatesFor and fieldTrieFor in one, remembered by the event's kind (and whether an exercise
 * consumes) and templateId when nothing else decides them (no interface rules in the index): two
 * map lookups per event instead of parsing the template id and building keys.
 */
export function eventPlanFor(index: RuleIndex, kind: EventKind, event: AnyEvent): EventPlan {
  if (index.byInterface.size > 0) {
    // Not remembered: the event's interfaces decide too. fieldReads is asked only once a rule
    // matches (evaluate), so an event no rule matches builds no field-reads key.
    return {
      candidates: candidatesFor(index, kind, event),
      get fieldReads() {
        return fieldTrieFor(index, kind, event);
      },
    };
  }
  let byKind = plans.get(index);
  if (byKind === undefined) {
    byKind = new Map();
    plans.set(index, byKind);
  }
  const key = kind === 'exercised' && (event as ExercisedEvent).consuming ? 'consumed' : kind;
  let byTemplate = byKind.get(key);
  if (byTemplate === undefined) {
    byTemplate = new Map();
    byKind.set(key, byTemplate);
  }
  let plan = byTemplate.get(event.templateId);
  if (plan === undefined) {
    plan = {
      candidates: candidatesFor(index, kind, event),
      fieldReads: fieldTrieFor(index, kind, event),
      triggerMatched: new Map(),
    };
    if (byTemplate.size >= PLANS_MAX) byTemplate.clear();
    byTemplate.set(event.templateId, plan);
  }
  return plan;
}

/**
 * The Daml fields read by every rule that can see this event (its trigger kind, template and
 * interfaces), merged: the event variable is built once and shared, so a field left out reads
 * `null` for all of them. Independent of `explain`, so rule tests see what the running bot sees.
 */
export function fieldTrieFor(index: RuleIndex, kind: EventKind, event: AnyEvent): FieldTrie | null {
  const consuming = kind === 'exercised' && (event as ExercisedEvent).consuming;
  const interfaces =
    index.byInterface.size === 0
      ? ''
      : ruleKindsOf(kind, event)
          .flatMap((k) => interfaceIdsOf(kind, event, k).map(qualifiedNameOf))
          .join(',');
  const key = `${kind}|${consuming}|${qualifiedNameOf(event.templateId)}|${interfaces}`;
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

const TRIGGER_MATCHED_MAX = 256;

/**
 * The candidates of `plan` (from eventPlanFor, an index without interface rules) that this
 * event's kind, template, choice and consumption match and that are enabled: all that is left
 * to check per event is the rule's party (witnessedBy). For the hot path that counts matches
 * instead of explaining them (evaluate's `countMatch`): the others would be explained as not
 * matched, and are not counted.
 */
export function triggerMatchedCandidates(
  plan: EventPlan,
  kind: EventKind,
  event: AnyEvent,
): readonly IndexedRule[] {
  const byPackage = plan.triggerMatched;
  if (byPackage === undefined) {
    return plan.candidates.filter(
      ({ rule }) => rule.enabled && !('reason' in matchTrigger(rule, kind, event, undefined)),
    );
  }
  const packageName = event.packageName ?? '';
  let byChoice = byPackage.get(packageName);
  if (byChoice === undefined) {
    if (byPackage.size >= TRIGGER_MATCHED_MAX) byPackage.clear();
    byChoice = new Map();
    byPackage.set(packageName, byChoice);
  }
  const choice = kind === 'exercised' ? (event as ExercisedEvent).choice : '';
  let list = byChoice.get(choice);
  if (list === undefined) {
    list = plan.candidates.filter(
      ({ rule }) => rule.enabled && !('reason' in matchTrigger(rule, kind, event, undefined)),
    );
    if (byChoice.size >= TRIGGER_MATCHED_MAX) byChoice.clear();
    byChoice.set(choice, list);
  }
  return list;
}

/** Whether the party of `alias` is a witness (ruleGate's party checks, as a yes or no). */
export function witnessedBy(
  alias: string,
  witnessParties: readonly string[],
  parties: Readonly<Record<string, string>>,
): boolean {
  const partyId = Object.hasOwn(parties, alias) ? parties[alias] : undefined;
  return partyId !== undefined && witnessParties.includes(partyId);
}
