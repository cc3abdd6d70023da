import type { CompletionElement } from '../ledger/ws/completion-stream.js';
import type { BotLedger } from './bot-ledger.js';
import type { StreamFollower } from './follow-stream.js';
import { prunedUpTo } from './pruned-up-to.js';
import type { SubmissionTracker } from './submission-tracker.js';
import { botStreamFollower, type FollowerDeps } from './update-follower.js';

export type CompletionFollowerDeps = FollowerDeps & {
  readonly ledger: Pick<BotLedger, 'completions' | 'ledgerEnd' | 'latestPrunedOffsets'>;
  readonly userId: string;
  /** Aborted after the drain: the follower ends. */
  readonly signal: AbortSignal;
  readonly tracker: Pick<SubmissionTracker, 'onCompletion'>;
};

/**
 * Follows the completions of the bot's user for the parties its rules and open intents act as,
 * and feeds them to the tracker.
 */
export class CompletionFollower {
  readonly #d: CompletionFollowerDeps;
  readonly #follower: StreamFollower<CompletionElement>;
  #parties: readonly string[] = [];

  constructor(deps: CompletionFollowerDeps) {
    this.#d = deps;
    this.#follower = botStreamFollower<CompletionElement>('completions', deps, {
      // No rule acts as anyone yet: wait for a reload that adds one.
      open: (from, options) =>
        this.#parties.length === 0
          ? undefined
          : deps.ledger.completions(
              { userId: deps.userId, parties: [...this.#parties], beginExclusive: from },
              options,
            ),
      handle: (element) => {
        if (element.kind === 'completion') {
          deps.tracker.onCompletion(element.completion, element.offset);
        }
      },
      onPruned: (from) => this.#afterPruning(from),
    });
  }

  get parties(): readonly string[] {
    return this.#parties;
  }

  /** Follows the completions of `parties` from `begin` until the stop. */
  run(begin: number, parties: Iterable<string>): Promise<void> {
    this.#parties = [...new Set(parties)].sort();
    return this.#follower.run(begin);
  }

  /** Adds acting parties (a reload widened them); the stream reopens if any is new. */
  widen(parties: readonly string[]): void {
    const known = new Set(this.#parties);
    const added = parties.filter((p) => !known.has(p));
    if (added.length === 0) return;
    this.#parties = [...known, ...added].sort();
    this.#follower.restart('new acting parties');
  }

  /**
   * The completions of older attempts are gone; the tracker's resubmissions (under the same
   * commandIds) find out what happened through deduplication instead. Resumes at the pruning
   * offset, not at the ledger end: a submission made since (a resubmission of this run) may
   * already have completed, and its completion must not be skipped.
   */
  async #afterPruning(from: number): Promise<number> {
    const { ledger, signal } = this.#d;
    const pruned = await prunedUpTo(ledger, { signal }).catch(() => 0);
    const to = pruned > from ? pruned : await ledger.ledgerEnd({ signal });
    this.#d.logger.warn(
      { stream: 'completions', fromOffset: from, toOffset: to },
      'completions pruned; resuming at the pruning offset',
    );
    return to;
  }
}
