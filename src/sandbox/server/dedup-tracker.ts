import { SandboxApiError } from './sandbox-api-error.js';

/** A request's deduplication period, parsed from the wire. `max` is `Empty` or absent. */
export type RequestedDedup =
  | { readonly kind: 'offset'; readonly offset: number }
  | { readonly kind: 'duration'; readonly ms: number }
  | { readonly kind: 'max' };

/** The period a completion reports as actually used (always an offset, like Canton). */
export type DedupOutcome =
  | { readonly kind: 'accept'; readonly reportedOffset: number }
  | {
      readonly kind: 'duplicate';
      readonly reportedOffset: number;
      readonly completionOffset: number;
      readonly existingSubmissionId: string;
    }
  | { readonly kind: 'too-early'; readonly error: SandboxApiError };

type Accepted = { readonly offset: number; readonly atMs: number; readonly submissionId: string };

type Entry = { inFlight: string | undefined; accepted: Accepted | undefined };

/** The change id of NOTES.md §8.5: (userId, set(actAs), commandId). */
export function changeIdKey(userId: string, actAs: readonly string[], commandId: string): string {
  const parties = actAs.length === 1 ? actAs : [...new Set(actAs)].sort();
  return `${userId}\u0000${parties.join('\u0001')}\u0000${commandId}`;
}

/**
 * Command deduplication as a participant does it: one in-flight submission per change id, and a
 * change accepted within the requested period makes later submissions duplicates. Only accepted
 * completions count; rejections leave no trace. A period longer than the maximum is not refused
 * (Canton 3.5 does not check it synchronously either); it is only as good as the history kept.
 */
export class DedupTracker {
  readonly #entries = new Map<string, Entry>();
  readonly #maxMs: number;

  constructor(maxDedupMs: number) {
    this.#maxMs = maxDedupMs;
  }

  get maxDedupMs(): number {
    return this.#maxMs;
  }

  /** Marks the change in flight; SUBMISSION_ALREADY_IN_FLIGHT if another submission holds it. */
  begin(key: string, submissionId: string): void {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { inFlight: undefined, accepted: undefined };
      this.#entries.set(key, entry);
    }
    if (entry.inFlight !== undefined) {
      throw new SandboxApiError(
        'SUBMISSION_ALREADY_IN_FLIGHT',
        'The submission with the same change ID is already being processed.',
        {
          context: { existingSubmissionId: entry.inFlight, changeId: printable(key) },
          definiteAnswer: false,
        },
      );
    }
    entry.inFlight = submissionId;
  }

  /** Releases the in-flight mark; with `accepted`, records the change as accepted at that offset. */
  end(key: string, accepted?: Accepted): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    entry.inFlight = undefined;
    if (accepted !== undefined) entry.accepted = accepted;
    else if (entry.accepted === undefined) this.#entries.delete(key);
  }

  /**
   * Decides at processing time, with the current time and the pruning offset (and its record time)
   * of the ledger.
   */
  check(
    key: string,
    period: RequestedDedup,
    nowMs: number,
    pruned: { readonly offset: number; readonly atMs: number },
  ): DedupOutcome {
    const accepted = this.#entries.get(key)?.accepted;
    if (period.kind === 'offset') {
      if (period.offset < pruned.offset) {
        return {
          kind: 'too-early',
          error: new SandboxApiError(
            'INVALID_DEDUPLICATION_PERIOD',
            `The submitted command had an invalid deduplication period: Deduplication period starts too early. The earliest possible deduplication offset is ${pruned.offset}.`,
            { context: { earliest_offset: String(pruned.offset) }, definiteAnswer: true },
          ),
        };
      }
      if (accepted !== undefined && accepted.offset > period.offset) {
        return duplicate(period.offset, accepted);
      }
      return { kind: 'accept', reportedOffset: period.offset };
    }
    const ms = period.kind === 'duration' ? period.ms : this.#maxMs;
    const startMs = nowMs - ms;
    if (accepted !== undefined && accepted.atMs > startMs) {
      return duplicate(accepted.offset - 1, accepted);
    }
    if (pruned.offset > 0 && pruned.atMs > startMs && accepted === undefined) {
      return {
        kind: 'too-early',
        error: new SandboxApiError(
          'INVALID_DEDUPLICATION_PERIOD',
          'The submitted command had an invalid deduplication period: Deduplication period starts too early. The earliest possible deduplication start is the pruning offset.',
          {
            context: { longest_duration: formatSeconds(Math.max(0, nowMs - pruned.atMs)) },
            definiteAnswer: true,
          },
        ),
      };
    }
    // The period actually used, as an offset: right after the last acceptance outside the window,
    // or from the pruning offset. It covers at least the requested period.
    return { kind: 'accept', reportedOffset: accepted?.offset ?? pruned.offset };
  }

  /** Number of change ids known (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }
}

function duplicate(reportedOffset: number, accepted: Accepted): DedupOutcome {
  return {
    kind: 'duplicate',
    reportedOffset,
    completionOffset: accepted.offset,
    existingSubmissionId: accepted.submissionId,
  };
}

function printable(key: string): string {
  const [user, parties, command] = key.split('\u0000');
  return `ChangeId(userId=${user ?? ''}, commandId=${command ?? ''}, actAs={${(parties ?? '').split('\u0001').join(', ')}})`;
}

/** Java Duration style, e.g. "PT168H", as Canton prints durations in error contexts. */
function formatSeconds(ms: number): string {
  const s = ms / 1000;
  if (s % 3600 === 0) return `PT${s / 3600}H`;
  if (s % 60 === 0) return `PT${s / 60}M`;
  return `PT${s}S`;
}

export function duplicateCommandError(outcome: {
  readonly completionOffset: number;
  readonly existingSubmissionId: string;
}): SandboxApiError {
  return new SandboxApiError(
    'DUPLICATE_COMMAND',
    'A command with the given command id has already been successfully processed',
    {
      context: {
        completion_offset: String(outcome.completionOffset),
        existing_submission_id: outcome.existingSubmissionId,
      },
      definiteAnswer: true,
    },
  );
}
