import type { RateLimitOptions, RetryOptions } from '../rules/rule-options.js';
import type { Intent } from '../rules/evaluation-result.js';
import type {
  Command,
  DeduplicationPeriod,
  DisclosedContract,
  JsCommands,
} from '../ledger/wire/wire-types.js';
import { decodingStore } from '../store/decoding-store.js';
import type { Store } from '../store/store.js';
import {
  SubmissionPayloadError,
  type SubmissionPayloadErrorCode,
} from './submission-payload-error.js';

export { SubmissionPayloadError, type SubmissionPayloadErrorCode };

/*
 * An intent on its way to the ledger takes these shapes, each owned by one step:
 * 1. `Intent` (rules/evaluation-result.ts): what evaluating a rule produced, commandId included.
 * 2. `NewIntent<SubmissionPayload>` (runtime/journal-entry.ts): the journal entry, recorded
 *    before anything is submitted: ids, the trigger key, the payload, the triggering event.
 * 3. `IntentRecord<JournalPayload>` (the store, read through `decodedJournal`): the entry with
 *    its state; its payload is checked once, as the row is read.
 * 4. `TrackedIntent` (runtime/tracked-intent.ts): a record the tracker works on, with the state
 *    of its current attempt.
 * 5. `JsCommands` (`buildSubmission`): one attempt's body on the wire.
 * `SubmissionPayload` is the JSON part of 2 and 3: `payloadOf` writes it, and
 * `decodeSubmissionPayload` is the one place that reads it back.
 */

/**
 * What the journal keeps of an intent to resubmit it after a restart without evaluating the rule
 * again: the commands and parties, and the rule options in force when it was recorded (the rule
 * may have been edited or removed since). JSON; no secrets.
 */
export type SubmissionPayload = {
  readonly version: 1;
  readonly commands: readonly Command[];
  readonly actAs: readonly string[];
  readonly readAs: readonly string[];
  readonly workflowId: string;
  readonly disclosedContracts: readonly DisclosedContract[];
  readonly retry: RetryOptions;
  readonly rateLimit: RateLimitOptions;
  readonly concurrency: number;
};

export function payloadOf(intent: Intent): SubmissionPayload {
  return {
    version: 1,
    commands: [intent.command],
    actAs: intent.actAs,
    readAs: intent.readAs,
    workflowId: intent.workflowId,
    disclosedContracts: intent.disclosedContracts,
    retry: intent.options.retry,
    rateLimit: intent.options.rateLimit,
    concurrency: intent.options.concurrency,
  };
}

/**
 * The one check of a payload read back from the journal: every field this version reads, with
 * its type and the range the rule schema guarantees. Returns the payload, typed, or an error
 * naming the first unusable field (its `code` is stable); it does not throw, so a caller reading
 * many rows can set the bad ones aside. The stored JSON is the one `payloadOf` has written since
 * version 1 of the journal; nothing is defaulted, because no version ever wrote less.
 */
export function decodeSubmissionPayload(
  value: unknown,
): SubmissionPayload | SubmissionPayloadError {
  const bad = (code: SubmissionPayloadErrorCode, what: string): SubmissionPayloadError =>
    new SubmissionPayloadError(
      code,
      `the journal entry's submission payload has ${what}; this ledgerbot cannot submit it`,
      value,
    );
  // Decoding twice (a store wrapped twice) changes nothing.
  if (value instanceof SubmissionPayloadError) return value;
  if (!isObject(value)) return bad('PAYLOAD_NOT_OBJECT', 'no object');
  const p = value as Record<keyof SubmissionPayload, unknown>;
  if (p.version !== 1) return bad('PAYLOAD_UNKNOWN_VERSION', 'a version other than 1');
  if (!Array.isArray(p.commands) || !p.commands.every(isObject)) {
    return bad('PAYLOAD_BAD_COMMANDS', 'no list of commands');
  }
  if (!isStringArray(p.actAs)) return bad('PAYLOAD_BAD_ACT_AS', 'no list of actAs parties');
  if (!isStringArray(p.readAs)) return bad('PAYLOAD_BAD_READ_AS', 'no list of readAs parties');
  if (typeof p.workflowId !== 'string') return bad('PAYLOAD_BAD_WORKFLOW_ID', 'no workflowId');
  if (!Array.isArray(p.disclosedContracts) || !p.disclosedContracts.every(isObject)) {
    return bad('PAYLOAD_BAD_DISCLOSED_CONTRACTS', 'no list of disclosed contracts');
  }
  if (!isRetry(p.retry)) return bad('PAYLOAD_BAD_RETRY', 'no usable retry options');
  if (!isRateLimit(p.rateLimit)) return bad('PAYLOAD_BAD_RATE_LIMIT', 'no usable rate limit');
  if (!isCount(p.concurrency)) return bad('PAYLOAD_BAD_CONCURRENCY', 'no usable concurrency');
  return value as SubmissionPayload;
}

/** A payload as the runtime reads it from the journal: usable, or the reason it is not. */
export type JournalPayload = SubmissionPayload | SubmissionPayloadError;

/**
 * The journal as the runtime reads it: `store` with every payload decoded once, as its row is
 * read. Behind it, a deadline or a concurrency is a field read once `instanceof` has told a
 * usable payload from an unusable one.
 */
export function decodedJournal(store: Store): Store<JournalPayload> {
  return decodingStore(store, decodeSubmissionPayload);
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function isDuration(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

function isRetry(value: unknown): value is RetryOptions {
  if (!isObject(value)) return false;
  const r = value as Record<keyof RetryOptions, unknown>;
  return (
    isCount(r.maxAttempts) &&
    isDuration(r.initialDelayMs) &&
    isDuration(r.maxDelayMs) &&
    isDuration(r.deadlineMs)
  );
}

function isRateLimit(value: unknown): value is RateLimitOptions {
  if (!isObject(value)) return false;
  const r = value as Record<keyof RateLimitOptions, unknown>;
  return isDuration(r.perSecond) && r.perSecond > 0 && isDuration(r.burst) && r.burst >= 1;
}

/**
 * How the dedup period of one attempt is set: anchored at the justifying offset (the default), or
 * a duration back from now (the fallback when the participant no longer knows that offset).
 */
export type DedupChoice =
  | { readonly kind: 'offset'; readonly offset: number }
  | { readonly kind: 'duration'; readonly ms: number }
  /**
   * Schedule slots: a duration reaching back to before the slot time, recomputed per attempt.
   * Replicas with separate stores read different snapshot offsets for the same slot, so an offset
   * anchor would not cover another replica's earlier submission of the same commandId; every
   * submission of a slot happens after the slot time, so this window covers them all.
   */
  | { readonly kind: 'since'; readonly fromMs: number };

/** Slack before the slot time, for clock skew between replicas and the participant. */
export const SLOT_DEDUP_SLACK_MS = 60_000;

export function deduplicationPeriod(choice: DedupChoice, nowMs = 0): DeduplicationPeriod {
  if (choice.kind === 'offset') return { DeduplicationOffset: { value: choice.offset } };
  const ms =
    choice.kind === 'duration'
      ? choice.ms
      : Math.max(0, nowMs - choice.fromMs) + SLOT_DEDUP_SLACK_MS;
  const seconds = Math.floor(ms / 1000);
  const nanos = (ms - seconds * 1000) * 1_000_000;
  return { DeduplicationDuration: { value: { seconds, nanos } } };
}

export type AttemptIds = {
  /** Deterministic: the same for every attempt of the intent, on every replica. */
  readonly commandId: string;
  readonly userId: string;
  /** Fresh for every attempt. */
  readonly submissionId: string;
  readonly dedup: DedupChoice;
  /** The attempt's time, for `since` periods. */
  readonly nowMs?: number;
};

/**
 * The `async/submit` body of one attempt. It shares the payload's commands (the transport only
 * serialises the body), so an attempt does not copy them.
 */
export function buildSubmission(payload: SubmissionPayload, ids: AttemptIds): JsCommands {
  return {
    commands: payload.commands as JsCommands['commands'],
    commandId: ids.commandId,
    actAs: [...payload.actAs],
    userId: ids.userId,
    ...(payload.readAs.length === 0 ? {} : { readAs: [...payload.readAs] }),
    workflowId: payload.workflowId,
    deduplicationPeriod: deduplicationPeriod(ids.dedup, ids.nowMs),
    submissionId: ids.submissionId,
    ...(payload.disclosedContracts.length === 0
      ? {}
      : { disclosedContracts: payload.disclosedContracts.map((d) => ({ ...d })) }),
  };
}
