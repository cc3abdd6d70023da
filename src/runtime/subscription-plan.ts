import { eventFormat, transactionFormat, updateFormat } from '../ledger/filters.js';
import type { TransactionShape } from '../ledger/filters.js';
import type { EventFormat, UpdateFormat } from '../ledger/wire/wire-types.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import { RuntimeError } from './runtime-error.js';

/** What the bot subscribes to, derived once from the rules and the party aliases. */
export type SubscriptionPlan = {
  /** Null when no rule reacts to events (schedule rules only): no updates stream then. */
  readonly updateFormat: UpdateFormat | null;
  readonly shape: TransactionShape;
  /** Party ids whose events the rules read, sorted. */
  readonly readParties: readonly string[];
  /** Party ids the rules act as: the completions stream is filtered to them, sorted. */
  readonly actAsParties: readonly string[];
};

/**
 * ONE server-side filter for the union of all enabled event rules: per reading party, exactly the
 * templates its rules watch (package-name references pass through as written, so the participant
 * matches every version of the package), and an InterfaceFilter with `includeInterfaceView` for
 * each interface a rule watches: the participant then sends the events of every template that
 * implements it, a created event with its view (`interfaceViews`, what `event.view` reads), an
 * archive with `implementedInterfaces`. LEDGER_EFFECTS when a rule watches exercises, since
 * ACS_DELTA carries no ExercisedEvents; ACS_DELTA otherwise (archived rules work with both).
 */
export function planSubscription(
  rules: RuleSet,
  parties: Readonly<Record<string, string>>,
): SubscriptionPlan {
  const partyId = (alias: string, ruleId: string): string => {
    const id = Object.hasOwn(parties, alias) ? parties[alias] : undefined;
    if (id === undefined) {
      throw new RuntimeError(
        'UNKNOWN_PARTY',
        `rule "${ruleId}" uses the party alias "${alias}", which bot.config.yaml \`parties:\` does not define; add it there`,
      );
    }
    return id;
  };
  const templatesByParty = new Map<string, { templates: Set<string>; interfaces: Set<string> }>();
  const actAs = new Set<string>();
  let exercises = false;
  for (const rule of rules.rules) {
    if (!rule.enabled) continue;
    for (const action of rule.then) for (const a of action.actAs) actAs.add(partyId(a, rule.id));
    const trigger = rule.trigger;
    if (trigger.kind === 'schedule') continue;
    if (trigger.kind === 'exercised') exercises = true;
    const reader = partyId(trigger.party, rule.id);
    let ids = templatesByParty.get(reader);
    if (ids === undefined) {
      ids = { templates: new Set(), interfaces: new Set() };
      templatesByParty.set(reader, ids);
    }
    (trigger.refKind === 'interface' ? ids.interfaces : ids.templates).add(trigger.template.text);
  }
  const shape: TransactionShape = exercises
    ? 'TRANSACTION_SHAPE_LEDGER_EFFECTS'
    : 'TRANSACTION_SHAPE_ACS_DELTA';
  const readParties = [...templatesByParty.keys()].sort();
  let format: UpdateFormat | null = null;
  if (readParties.length > 0) {
    const merged: EventFormat = { filtersByParty: {}, verbose: true };
    for (const party of readParties) {
      const ids = templatesByParty.get(party)!;
      const one = eventFormat({
        parties: [party],
        templates: [...ids.templates].sort(),
        interfaces: [...ids.interfaces].sort(),
        includeInterfaceView: true,
      });
      Object.assign(merged.filtersByParty!, one.filtersByParty);
    }
    format = updateFormat({ transactions: transactionFormat(merged, shape) });
  }
  return { updateFormat: format, shape, readParties, actAsParties: [...actAs].sort() };
}
