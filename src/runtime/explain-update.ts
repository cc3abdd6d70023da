import { hasLedgerErrorCode } from '../ledger/error-checks.js';
import { eventFormat, transactionFormat, updateFormat } from '../ledger/filters.js';
import type { LedgerClient } from '../ledger/ledger-client.js';
import type {
  Event,
  JsGetUpdateResponse,
  JsTransaction,
  UpdateFormat,
} from '../ledger/wire/wire-types.js';
import { evaluate } from '../rules/evaluate.js';
import type { EvaluationResult } from '../rules/evaluation-result.js';
import type { RuleIndex } from '../rules/rule-index.js';
import type { SubscriptionPlan } from './subscription-plan.js';

/** Which update to explain: by its id, or by its offset. */
export type UpdateSelector = { readonly updateId: string } | { readonly offset: number };

/** What explaining reads and evaluates with: the bot's rules and its subscription filter. */
export type ExplainInputs = {
  readonly ledger: Pick<LedgerClient, 'updateById' | 'updateByOffset'>;
  readonly index: RuleIndex;
  readonly plan: SubscriptionPlan;
  /** The bot's update format (`plan.updateFormat`): the update as the bot sees it. */
  readonly updateFormat: UpdateFormat;
  readonly parties: Readonly<Record<string, string>>;
  readonly packageNameOf: (packageId: string) => string | undefined;
};

/** One event of the update and what the rules made of it. */
export type EventExplanation = { readonly event: Event; readonly result: EvaluationResult };

export type UpdateExplanation =
  | {
      readonly kind: 'explained';
      readonly transaction: JsTransaction;
      readonly events: readonly EventExplanation[];
    }
  /** The update exists, but none of its events passes the bot's subscription filter. */
  | { readonly kind: 'filtered' }
  /** No such update, or none of the rules' parties sees it. */
  | { readonly kind: 'not-found' }
  /** A reassignment or topology transaction: rules react to transactions only. */
  | { readonly kind: 'not-a-transaction'; readonly updateKind: string };

/**
 * `ledgerbot explain` and `GET /explain`: reads one update through the bot's own filter and
 * evaluates every event of it through the rules exactly as the bot does (CEL `now` is the
 * update's record time), with every rule's explanation. Submits and writes nothing. Ledger
 * errors other than "not found" (the participant cannot be reached, a refusal) are thrown.
 */
export async function explainUpdate(
  inputs: ExplainInputs,
  which: UpdateSelector,
): Promise<UpdateExplanation> {
  let response: JsGetUpdateResponse;
  try {
    response = await readUpdate(inputs, which, inputs.updateFormat);
  } catch (err) {
    if (!hasLedgerErrorCode(err, 'UPDATE_NOT_FOUND')) throw err;
    // Tell "the bot's filter hides every event of it" apart from "no such update".
    return (await visibleToReaders(inputs, which)) ? { kind: 'filtered' } : { kind: 'not-found' };
  }
  const update = response.update;
  if (update === undefined || !('Transaction' in update)) {
    const updateKind = update === undefined ? 'empty' : (Object.keys(update)[0] ?? 'unknown');
    return { kind: 'not-a-transaction', updateKind };
  }
  const tx = update.Transaction.value;
  const recordMs = Date.parse(tx.recordTime);
  // As the bot: CEL `now` is the record time, so the explanation matches what happened.
  const context = {
    parties: inputs.parties,
    now: new Date(Number.isFinite(recordMs) ? recordMs : 0),
  };
  const events = tx.events.map((event) => ({
    event,
    result: evaluate(inputs.index, { transaction: tx, event }, context, {
      explain: 'all',
      packageNameOf: inputs.packageNameOf,
    }),
  }));
  return { kind: 'explained', transaction: tx, events };
}

export function describeSelector(which: UpdateSelector): string {
  return 'updateId' in which ? `update ${which.updateId}` : `the update at offset ${which.offset}`;
}

/** The update through `format`; UPDATE_NOT_FOUND is thrown as it comes. */
function readUpdate(
  inputs: ExplainInputs,
  which: UpdateSelector,
  format: UpdateFormat,
): Promise<JsGetUpdateResponse> {
  return 'updateId' in which
    ? inputs.ledger.updateById({ updateId: which.updateId, updateFormat: format })
    : inputs.ledger.updateByOffset({ offset: which.offset, updateFormat: format });
}

async function visibleToReaders(inputs: ExplainInputs, which: UpdateSelector): Promise<boolean> {
  try {
    const format = updateFormat({
      transactions: transactionFormat(
        eventFormat({ parties: inputs.plan.readParties }),
        inputs.plan.shape,
      ),
    });
    await readUpdate(inputs, which, format);
    return true;
  } catch (err) {
    if (hasLedgerErrorCode(err, 'UPDATE_NOT_FOUND')) return false;
    throw err;
  }
}
