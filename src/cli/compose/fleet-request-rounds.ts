import type { Logger } from '../../core/logger.js';
import { systemClock } from '../../core/clock.js';
import type { FleetRequests } from '../../store/pg/fleet-requests.js';
import { withoutPassword } from '../../store/pg/mask-pg-url.js';
import { carryOutFleetRequest } from './carry-out-fleet-request.js';
import type { RemovedRules } from './removed-rules.js';
import type { RunningBot } from './start-bot.js';

export type FleetRequestRoundsOptions = {
  readonly requests: FleetRequests;
  readonly removed: RemovedRules;
  readonly instanceId: string;
  readonly leasePeriodMs: number;
  /** The fleet's database URL, only to keep its password out of the warnings. */
  readonly url: string;
  readonly log: Logger;
  /** The member's bot now, if any, and the rules it was started with. */
  readonly current: () =>
    { readonly bot: RunningBot; readonly rules: ReadonlySet<string> } | undefined;
};

/**
 * A fleet member's rounds over the operators' requests (fleet-requests.ts), every third of the
 * lease period: the requests for the rules its running bot runs, claimed, carried out one after
 * the other, and deleted once their effects are durable. A request not done keeps its claim: the
 * next round takes it again (rounds never overlap), or, if this member dies or loses the rule,
 * the rule's next owner once the claim is a lease period old.
 */
export class FleetRequestRounds {
  readonly #o: FleetRequestRoundsOptions;
  #timer: ReturnType<typeof systemClock.setTimeout> | undefined;
  #stopped = false;

  constructor(options: FleetRequestRoundsOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#stopped) return;
    this.#timer = systemClock.setTimeout(
      () => void this.#round().finally(() => this.start()),
      Math.max(100, Math.floor(this.#o.leasePeriodMs / 3)),
    );
  }

  /** No round starts after this (one under way finishes). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) systemClock.clearTimeout(this.#timer);
  }

  async #round(): Promise<void> {
    const { requests, removed, instanceId, log } = this.#o;
    const now = this.#o.current();
    const bot = now?.bot.bot.state === 'running' ? now : undefined;
    // Only while one bot runs: its rules are then every rule a commit of this member writes.
    if (bot !== undefined) void removed.forget(bot.rules);
    try {
      const taken = await requests.take(bot === undefined ? [] : [...bot.rules], instanceId);
      const done: string[] = [];
      for (const c of taken) {
        if (bot !== undefined && (await carryOutFleetRequest(bot.bot, c, log))) done.push(c.id);
      }
      await requests.done(done);
    } catch (err) {
      log.warn(
        { error: withoutPassword((err as Error).message, this.#o.url) },
        'reading the fleet requests failed; the next round tries again',
      );
    }
  }
}
