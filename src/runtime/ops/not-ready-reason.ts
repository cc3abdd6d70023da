import type { BotState } from '../bot.js';

/** A read of the ledger end: its offset, or why it could not be read. */
export type LedgerEndReading = { readonly offset: number } | { readonly error: string };

/** What `/readyz` decides on. */
export type ReadinessProbe = {
  readonly botState: BotState;
  /** Why the bot has not started yet, while it waits for the participant at start. */
  readonly waitingFor?: string | undefined;
  /** Whether the rules read events at all (schedule rules only: no updates stream to wait for). */
  readonly streamExpected: boolean;
  /** A websocket of the updates stream is open now (not inferred from traffic). */
  readonly updatesConnected: boolean;
  /** Why the updates stream last failed, while it is down (BotMetrics.updatesProblem). */
  readonly updatesProblem?: string | undefined;
  /** The last offset the bot processed, read after the ledger end so the lag is not negative. */
  readonly processedOffset: () => number | undefined;
  /** /readyz fails above this lag, in offsets. */
  readonly maxLag: number;
  /** Only called when everything else is ready: a disconnected bot answers without a round trip. */
  readonly readLedgerEnd: () => Promise<LedgerEndReading>;
};

/**
 * Why the bot is not ready, or undefined when it is: it runs, its updates stream is connected
 * (when its rules need one), the ledger end can be read, and the lag (ledger end minus the last
 * offset processed) is at most `maxLag`. The reasons are plain text for `/readyz` answers.
 */
export async function notReadyReason(p: ReadinessProbe): Promise<string | undefined> {
  if (p.botState !== 'running') return p.waitingFor ?? `bot is ${p.botState}`;
  if (!p.streamExpected) return undefined;
  if (!p.updatesConnected) {
    return p.updatesProblem === undefined
      ? 'updates stream disconnected'
      : `updates stream disconnected: ${p.updatesProblem}`;
  }
  const end = await p.readLedgerEnd();
  if ('error' in end) return `cannot read the ledger end: ${end.error}`;
  const processed = p.processedOffset();
  if (processed === undefined) return undefined;
  const lag = Math.max(0, end.offset - processed);
  return lag > p.maxLag ? `lag ${lag} > ${p.maxLag}` : undefined;
}
