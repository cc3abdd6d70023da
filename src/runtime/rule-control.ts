import type { BackoffPolicy } from '../core/backoff.js';
import type { Logger } from '../core/logger.js';
import type { CompiledRule } from '../rules/compiled-rule.js';
import { indexRules } from '../rules/rule-index.js';
import type { BotEvents, BotState } from './bot-events.js';
import type { BotLedger } from './bot-ledger.js';
import type { Checkpoint } from './checkpoint.js';
import { errorFields } from './error-record.js';
import { retryOnClock, type RetryTiming } from './retry-on-clock.js';
import type { PauseState, RuleBook, RuleStatus } from './rule-book.js';
import { RuntimeError } from './runtime-error.js';
import { planSubscription } from './subscription-plan.js';
import type { TransactionIngest } from './transaction-ingest.js';

export type RuleControlDeps = RetryTiming & {
  readonly book: RuleBook;
  readonly checkpoint: Checkpoint;
  readonly state: () => BotState;
  readonly ledger: Pick<BotLedger, 'updates'>;
  readonly parties: Readonly<Record<string, string>>;
  readonly ingest: TransactionIngest;
  /** Intake: a replay gives up when it aborts (the hold stays; a restart replays from it). */
  readonly signal: AbortSignal;
  readonly streamBackoff: BackoffPolicy | undefined;
  readonly logger: Logger;
  readonly events: BotEvents;
  /** A replay failed in a way retrying cannot fix (a bug): the bot fails. */
  readonly fail: (error: unknown) => void;
};

/** Pausing and resuming rules while the bot runs (see `Bot.pauseRule`, `Bot.resumeRule`). */
export class RuleControl {
  readonly #d: RuleControlDeps;
  readonly #replays = new Set<Promise<void>>();

  constructor(deps: RuleControlDeps) {
    this.#d = deps;
  }

  pause(ruleId: string): RuleStatus {
    const { book } = this.#d;
    const rule = this.#controllable(ruleId);
    const p = book.pauseOf(ruleId);
    if (p?.resuming === true) {
      throw new RuntimeError(
        'RULE_RESUMING',
        `rule "${ruleId}" is still evaluating the events of its last pause; pause it again once it is active`,
      );
    }
    if (p === undefined) {
      const { checkpoint } = this.#d;
      // Not below the rule's own checkpoint: a resume must not replay the events before it.
      const evaluated = checkpoint.evaluatedThrough ?? checkpoint.stored() ?? 0;
      const offset = Math.max(evaluated, book.floorOf(ruleId) ?? evaluated);
      book.pause(ruleId, { since: this.#d.clock.now(), offset, resuming: false });
      this.#d.logger.info({ ruleId, offset }, 'rule paused');
    }
    return book.statusOf(rule);
  }

  /**
   * Pauses `ruleIds` as the bot starts, before its updates stream opens, at `offset` (where the
   * stream begins; a rule whose own checkpoint is further on, at that): none of their events is
   * evaluated until a resume replays (offset, …]. Rules the bot does not run, or runs disabled,
   * are left out; returns the ids paused.
   */
  pauseAtStart(ruleIds: readonly string[], offset: number): string[] {
    const { book } = this.#d;
    const paused: string[] = [];
    for (const ruleId of ruleIds) {
      if (book.find(ruleId)?.enabled !== true || book.pauseOf(ruleId) !== undefined) continue;
      const at = Math.max(offset, book.floorOf(ruleId) ?? offset);
      book.pause(ruleId, { since: this.#d.clock.now(), offset: at, resuming: false });
      paused.push(ruleId);
    }
    if (paused.length > 0)
      this.#d.logger.info({ ruleIds: paused, offset }, 'rules paused at start');
    return paused;
  }

  resume(ruleId: string): RuleStatus {
    const { book } = this.#d;
    const rule = this.#controllable(ruleId);
    const p = book.pauseOf(ruleId);
    if (p === undefined || p.resuming) return book.statusOf(rule);
    if (rule.trigger.kind === 'schedule') {
      // No events waited for it (see RuleBook.heldAt): active again at once, nothing to replay.
      book.end(rule.id, p);
      this.#d.logger.info({ ruleId }, 'rule active again');
      this.#d.events.emit('resumed', rule.id);
      return book.statusOf(rule);
    }
    const to = this.#d.checkpoint.evaluatedThrough ?? p.offset;
    // From here on the live stream evaluates the rule again; the replay covers (p.offset, to].
    book.startResuming(p);
    this.#d.logger.info({ ruleId, fromOffset: p.offset, toOffset: to }, 'rule resuming');
    const task = this.#replay(rule, p, to)
      .catch((err: unknown) => this.#d.fail(err))
      .finally(() => this.#replays.delete(task));
    this.#replays.add(task);
    return book.statusOf(rule);
  }

  /** Settles when every replay under way has ended (they end at the intake's abort). */
  async settled(): Promise<void> {
    await Promise.all(this.#replays);
  }

  #controllable(ruleId: string): CompiledRule {
    const state = this.#d.state();
    if (state !== 'running') {
      throw new RuntimeError(
        'NOT_RUNNING',
        `the bot is ${state}; rules can be paused and resumed while it runs`,
      );
    }
    const rule = this.#d.book.find(ruleId);
    if (rule === undefined) {
      throw new RuntimeError('UNKNOWN_RULE', `no rule with id "${ruleId}"`);
    }
    if (!rule.enabled) {
      throw new RuntimeError(
        'RULE_DISABLED',
        `rule "${ruleId}" has enabled: false in ${rule.pos.file}; enable it there and reload`,
      );
    }
    return rule;
  }

  /** Reads (from, to] again and evaluates it for `rule` only, retrying until done or stopped. */
  async #replay(rule: CompiledRule, p: PauseState, to: number): Promise<void> {
    const d = this.#d;
    const { signal } = d;
    const index = indexRules([rule]);
    const format = planSubscription({ rules: [rule], warnings: [] }, d.parties).updateFormat;
    let from = p.offset;
    const readPause = async (): Promise<void> => {
      if (format === null || from >= to) return;
      const stream = d.ledger.updates(
        { beginExclusive: from, endInclusive: to, updateFormat: format },
        { signal, backoff: d.streamBackoff },
      );
      for await (const element of stream) {
        if (element.kind === 'transaction') {
          await d.ingest.ingest(element.transaction, element.offset, { index, live: false });
        }
        from = element.offset;
      }
    };
    try {
      await retryOnClock(readPause, {
        timing: d,
        signal,
        onRetry: (err, wait) =>
          d.logger.error(
            {
              ruleId: rule.id,
              fromOffset: from,
              toOffset: to,
              delayMs: wait.delayMs,
              ...errorFields(err),
            },
            'rule replay failed; retrying',
          ),
      });
    } catch (err) {
      if (signal.aborted) return; // the hold stays: a restart replays from it
      throw err;
    }
    if (!d.book.end(rule.id, p)) return;
    d.checkpoint.save();
    d.logger.info({ ruleId: rule.id, fromOffset: p.offset, toOffset: to }, 'rule active again');
    d.events.emit('resumed', rule.id);
  }
}
