import { SubmissionPayloadError, type JournalPayload } from './submission-payload.js';

/**
 * What the pipeline reads of a journal entry's payload (decoded as the row was read) before
 * handing it to the tracker. An unusable payload gets the neutral values here; the tracker
 * dead-letters it (`bad-payload`) at its first attempt.
 */
export type StoredLimits = {
  /** The rule's `concurrency` when the intent was recorded; 1 for an unusable payload. */
  readonly concurrency: number;
  /** The rule's `retry.deadline`; undefined for an unusable payload or none. */
  readonly deadlineMs: number | undefined;
};

export function storedLimits(payload: JournalPayload): StoredLimits {
  if (payload instanceof SubmissionPayloadError) return { concurrency: 1, deadlineMs: undefined };
  const ms = payload.retry.deadlineMs;
  return { concurrency: payload.concurrency, deadlineMs: ms > 0 ? ms : undefined };
}
