import { decodeSubmissionPayload, SubmissionPayloadError } from './submission-payload.js';

/**
 * What the pipeline reads of a journal entry's stored payload before handing it to the tracker,
 * through the payload's one codec (`decodeSubmissionPayload`). An unusable payload gets the
 * neutral values here; the tracker dead-letters it (`bad-payload`) at its first attempt.
 */
export type StoredLimits = {
  /** The rule's `concurrency` when the intent was recorded; 1 for an unusable payload. */
  readonly concurrency: number;
  /** The rule's `retry.deadline`; undefined for an unusable payload or none. */
  readonly deadlineMs: number | undefined;
};

export function storedLimits(payload: unknown): StoredLimits {
  const decoded = decodeSubmissionPayload(payload);
  if (decoded instanceof SubmissionPayloadError) return { concurrency: 1, deadlineMs: undefined };
  const ms = decoded.retry.deadlineMs;
  return { concurrency: decoded.concurrency, deadlineMs: ms > 0 ? ms : undefined };
}
