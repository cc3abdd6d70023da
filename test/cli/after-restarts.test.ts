import { describe, expect, it } from 'vitest';
import { afterRestarts } from '../../src/cli/compose/after-restarts.js';

/** A member's restart chain as start-fleet-member.ts keeps it: steps appended to one promise. */
function member() {
  let running: string | undefined = 'bot-1';
  let chain: Promise<void> = Promise.resolve();
  let ended = false;
  const releases: (() => void)[] = [];
  /** Queues a step that does `begin` when it begins, then waits to be released to do `end`. */
  const queue = (begin: () => void, end: () => void): void => {
    chain = chain.then(
      () =>
        new Promise<void>((resolve) => {
          begin();
          releases.push(() => {
            end();
            resolve();
          });
        }),
    );
  };
  const step = async (): Promise<void> => {
    while (releases.length === 0) await new Promise((r) => setImmediate(r));
    releases.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return {
    state: { running: () => running, chain: () => chain, ended: () => ended },
    // As restart() does: the running bot is dropped when its stop begins, then closed.
    stop: () =>
      queue(
        () => (running = undefined),
        () => undefined,
      ),
    start: (bot: string) =>
      queue(
        () => undefined,
        () => (running = bot),
      ),
    end: () => (ended = true),
    step,
  };
}

describe('afterRestarts', () => {
  it('gives the running bot at once', async () => {
    const m = member();
    await expect(afterRestarts(m.state)).resolves.toBe('bot-1');
  });

  it('waits through a stop for the start queued behind it (a hand-on)', async () => {
    const m = member();
    m.stop();
    await m.step(); // the bot is stopped; the start is not queued yet
    const asked = afterRestarts(m.state); // a reload between the two bots
    m.start('bot-2');
    await m.step();
    await expect(asked).resolves.toBe('bot-2');
  });

  it('waits while a stop is under way for the start queued with it (a hand-on)', async () => {
    const m = member();
    m.stop();
    m.start('bot-2');
    await new Promise((r) => setImmediate(r)); // the stop has begun: no bot runs
    expect(m.state.running()).toBeUndefined();
    const asked = afterRestarts(m.state);
    await m.step();
    await m.step();
    await expect(asked).resolves.toBe('bot-2');
  });

  it('gives nothing when the chain is done without a bot, or the member ends', async () => {
    const m = member();
    m.stop();
    await m.step();
    await expect(afterRestarts(m.state)).resolves.toBeUndefined();
    m.end();
    m.start('bot-2');
    await expect(afterRestarts(m.state)).resolves.toBeUndefined();
  });
});
