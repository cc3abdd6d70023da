import { IllegalStateError } from '../core/illegal-state-error.js';
import { zoneFormats } from '../core/zone-formats.js';
import type { CreatedEvent } from '../ledger/wire/wire-types.js';
import type { CompiledRule } from './compiled-rule.js';
import { eventFieldsOf, viewOf } from './event-variable.js';
import { notMatched, ruleGate } from './match-event.js';
import {
  findInterface,
  interfaceIdsOf,
  interfaceMismatchMessage,
  viewFailure,
  viewValueOf,
  type PackageNameOf,
} from './match-interface.js';
import type { EvaluationResult } from './evaluation-result.js';
import { fireRule } from './fire-rule.js';
import { templateMismatch } from './match-template.js';
import { ruleVariable } from './rule-index.js';

export type SlotContext = {
  /** Party alias → party id, from the bot config. */
  readonly parties: Readonly<Record<string, string>>;
  /**
   * The offset of the ACS snapshot the slot's contracts were read at: the justifying read, so
   * deduplication is anchored there.
   */
  readonly snapshotOffset: number;
  /**
   * The name of the package with this id (PackageCatalogue.packageNameOf), to match a
   * contract's interface views against a `#name` interface in `forEach`; without it, by
   * `Module:Entity` alone.
   */
  readonly packageNameOf?: PackageNameOf;
};

/**
 * Evaluates a schedule rule for one slot and, with `forEach`, one active contract (call it once
 * per contract of the snapshot; without `forEach`, once per slot with `contract` null).
 *
 * CEL sees `now` = the slot time, `today` = UTC midnight of the slot's calendar day in the rule's
 * time zone (comparable with `date("…")`), `contract` = the CreatedEvent (createdAt as a
 * timestamp, offset and nodeId as ints; for a `forEach` on an interface, with the interface view
 * as `view`, from the contract's `interfaceViews`), `parties` and `rule`. The commandId's trigger
 * key is the slot time and the contract id. Like `evaluate`, it never throws for a failing
 * expression.
 * A rule with `forEach.batch` fires per batch, not per contract: run it with SlotEvaluation.
 */
export function evaluateSlot(
  rule: CompiledRule,
  slot: Date,
  contract: CreatedEvent | null,
  context: SlotContext,
): EvaluationResult {
  const input = slotInput(rule, slot, contract, context);
  if (input.kind === 'done') return input.result;
  if (rule.trigger.kind === 'schedule' && rule.trigger.forEach?.batch != null) {
    throw new IllegalStateError(
      `evaluateSlot: rule "${rule.id}" fires per batch of contracts; evaluate its slot with SlotEvaluation`,
    );
  }
  const result = fireRule(rule, {
    variables: input.variables,
    parties: context.parties,
    triggerKey: { kind: 'slot', slot: slot.getTime(), contractId: input.contractId },
    offset: context.snapshotOffset,
    contractId: input.contractId,
  });
  const error = result.explanation.error;
  return {
    intents: result.intents,
    explanations: [result.explanation],
    errors: error === null ? [] : [error],
  };
}

/**
 * What a schedule rule's conditions see for one slot and contract (or none, without `forEach`):
 * the CEL variables, or (`done`) the result when the rule does not get that far: the contract
 * is of another template, lacks the interface's view, or its party does not see it; the rule
 * is disabled.
 */
export type SlotInput =
  | {
      readonly kind: 'variables';
      readonly variables: Record<string, unknown>;
      readonly contractId: string | null;
    }
  | { readonly kind: 'done'; readonly result: EvaluationResult };

export function slotInput(
  rule: CompiledRule,
  slot: Date,
  contract: CreatedEvent | null,
  context: SlotContext,
): SlotInput {
  const trigger = rule.trigger;
  if (trigger.kind !== 'schedule') {
    throw new IllegalStateError(`evaluateSlot: rule "${rule.id}" is not a schedule rule`);
  }
  const forEach = trigger.forEach;
  if ((forEach === null) !== (contract === null)) {
    throw new IllegalStateError(
      forEach === null
        ? `evaluateSlot: rule "${rule.id}" has no forEach, pass no contract`
        : `evaluateSlot: rule "${rule.id}" has forEach, pass each contract`,
    );
  }
  const done = (result: EvaluationResult): SlotInput => ({ kind: 'done', result });
  const contractId = contract?.contractId ?? null;
  let view: { readonly value: unknown } | null = null;
  if (forEach !== null && contract !== null && forEach.refKind === 'interface') {
    const ids = interfaceIdsOf('created', contract, 'created');
    const found = findInterface(forEach.template, ids, context.packageNameOf);
    if ('mismatch' in found) {
      const message = interfaceMismatchMessage(
        forEach.template,
        found.mismatch,
        'created',
        contract.templateId,
        ids,
      );
      return done(none(notMatched(rule, found.mismatch, message, contractId)));
    }
    const value = viewValueOf(contract, found.id);
    if ('failed' in value) {
      const explanation = viewFailure(rule, value.failed, contractId, forEach.pos);
      return done({ intents: [], explanations: [explanation], errors: [explanation.error!] });
    }
    view = value;
  } else if (forEach !== null && contract !== null) {
    const template = templateMismatch(forEach.template, contract.templateId, contract.packageName);
    if (template !== null) {
      return done(
        none(
          notMatched(
            rule,
            template,
            `the contract is of template ${contract.templateId}, forEach reads ${forEach.template.text}`,
            contractId,
          ),
        ),
      );
    }
  }
  const gate = ruleGate(
    rule,
    { party: forEach?.party ?? '' },
    contract?.witnessParties ?? [],
    context.parties,
  );
  // Without forEach there is no contract whose witnesses could be checked; only `enabled` applies.
  if (gate !== null && (forEach !== null || gate.reason === 'rule-disabled')) {
    return done(none(notMatched(rule, gate.reason, gate.message, contractId)));
  }
  const variables: Record<string, unknown> = {
    parties: context.parties,
    rule: ruleVariable(rule),
    now: slot,
    today: startOfDay(slot, trigger.timezone),
  };
  if (contract !== null) {
    // eventFieldsOf made this object for this contract alone: the view goes on it, uncopied.
    const fields = eventFieldsOf(contract, rule.fieldReads ?? null);
    if (view !== null) fields.view = viewOf(view.value, rule.fieldReads ?? null);
    variables.contract = fields;
  }
  return { kind: 'variables', variables, contractId };
}

function none(explanation: EvaluationResult['explanations'][number]): EvaluationResult {
  return { intents: [], explanations: [explanation], errors: [] };
}

const dayFormatFor = zoneFormats('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' });

/** A slot evaluates every contract with the same instant: remember the last answer. */
let lastDay: { ms: number; timeZone: string; day: Date } | undefined;

/** UTC midnight of the calendar day `instant` falls on in `timeZone`. */
export function startOfDay(instant: Date, timeZone: string): Date {
  const ms = instant.getTime();
  if (lastDay !== undefined && lastDay.ms === ms && lastDay.timeZone === timeZone) {
    return new Date(lastDay.day.getTime());
  }
  const parts = dayFormatFor(timeZone).formatToParts(instant);
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  const day = new Date(Date.UTC(get('year'), get('month') - 1, get('day')));
  lastDay = { ms, timeZone, day };
  return new Date(day.getTime());
}
