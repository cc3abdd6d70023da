import type { JsTransaction } from '../ledger/wire/wire-types.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { NewIntent } from '../store/store.js';
import type { SlotSubmitContext } from '../schedule/run-slot.js';
import type { UpdateEvaluation } from './evaluate-update.js';
import { payloadOf, type SubmissionPayload } from './submission-payload.js';

/**
 * The journal entry of an intent from a transaction of the update stream (payload, trigger,
 * triggering event), as the bot records it before submitting. bench/ingest-bench.ts measures it.
 */
function newIntentOf(
  intent: Intent,
  tx: JsTransaction,
  now: number,
  userId: string,
): NewIntent<SubmissionPayload> {
  const key = intent.triggerKey;
  const event = key.kind === 'slot' ? undefined : tx.events.find((e) => nodeIdOf(e) === key.nodeId);
  return entryOf(intent, now, userId, {
    updateId: tx.updateId,
    offset: tx.offset,
    recordTime: tx.recordTime,
    ...(event === undefined ? {} : { event }),
  });
}

/** The journal entry of an intent of a schedule slot (the slot and its snapshot as the event). */
export function slotIntentOf(
  intent: Intent,
  context: SlotSubmitContext,
  now: number,
  userId: string,
): NewIntent<SubmissionPayload> {
  const key = intent.triggerKey;
  return entryOf(intent, now, userId, {
    slot: new Date(context.slot).toISOString(),
    snapshotOffset: context.snapshotOffset,
    ...(key.kind === 'slot' && key.contractId !== null ? { contractId: key.contractId } : {}),
  });
}

/** What every journal entry holds, whatever justified it: `event` says what that was. */
function entryOf(
  intent: Intent,
  now: number,
  userId: string,
  event: NewIntent<SubmissionPayload>['event'],
): NewIntent<SubmissionPayload> {
  const payload = payloadOf(intent);
  return {
    commandId: intent.commandId,
    userId,
    actAs: intent.actAs,
    ruleId: intent.ruleId,
    revision: intent.revision,
    actionIndex: intent.actionIndex,
    trigger: intent.triggerKey,
    offset: intent.offset,
    payload,
    event,
    deadline: now + payload.retry.deadlineMs,
    nextAttemptAt: now,
  };
}

function nodeIdOf(event: JsTransaction['events'][number]): number | undefined {
  if ('CreatedEvent' in event) return event.CreatedEvent.nodeId;
  if ('ExercisedEvent' in event) return event.ExercisedEvent.nodeId;
  if ('ArchivedEvent' in event) return event.ArchivedEvent.nodeId;
  return undefined;
}

/** The journal entries of an evaluated transaction's intents. */
export function journalEntriesOf(
  evaluation: UpdateEvaluation,
  now: number,
  userId: string,
): NewIntent<SubmissionPayload>[] {
  return evaluation.intents.map((i) => newIntentOf(i, evaluation.transaction, now, userId));
}
