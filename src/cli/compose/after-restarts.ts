/** What `afterRestarts` reads of a fleet member, each time it looks. */
export type RestartState<T> = {
  /** The bot running now, if any. */
  readonly running: () => T | undefined;
  /** The member's queue of stops and starts as it is now (it grows as restarts are asked). */
  readonly chain: () => Promise<void>;
  /** The member is leaving or has failed: no bot comes. */
  readonly ended: () => boolean;
};

/**
 * The bot a fleet member runs once the stops and starts queued on its chain are through: at
 * once if one runs, else after each step, for as long as the chain grows (a hand-on queues a
 * stop, then the start of the next bot). Undefined when the member ends, or the chain is done
 * and no bot runs. One wait on the chain as it was is not enough: a caller that came during the
 * stop would wake up between the two bots.
 */
export async function afterRestarts<T>(state: RestartState<T>): Promise<T | undefined> {
  for (;;) {
    const bot = state.running();
    if (bot !== undefined) return bot;
    if (state.ended()) return undefined;
    const pending = state.chain();
    await pending;
    if (state.running() === undefined && state.chain() === pending) return undefined;
  }
}
