import type { RateLimitOptions, RetryOptions } from '../rules/compiled-rule.js';
import type { Intent } from '../rules/evaluation-result.js';
import type {
  Command,
  DeduplicationPeriod,
  DisclosedContract,
  JsCommands,
} from '../ledger/wire/wire-types.js';

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

/** Narrows a stored payload; throws when the journal holds something this version cannot use. */
export function parsePayload(value: unknown): SubmissionPayload {
  const p = value as Partial<SubmissionPayload> | null;
  if (
    p === null ||
    typeof p !== 'object' ||
    p.version !== 1 ||
    !Array.isArray(p.commands) ||
    !Array.isArray(p.actAs) ||
    typeof p.retry !== 'object'
  ) {
    throw new TypeError('the journal entry has no usable submission payload (version 1)');
  }
  return p as SubmissionPayload;
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

/** The `async/submit` body of one attempt. */
export function buildSubmission(payload: SubmissionPayload, ids: AttemptIds): JsCommands {
  return {
    commands: payload.commands.map((c) => structuredClone(c)),
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
