import type { Random } from '../src/core/random.js';

/** The two sizes of the chaos scenario: the full run (docs/reliability.md) and the CI smoke. */
export type ChaosPlan = {
  readonly name: 'full' | 'smoke';
  /** Invoices that must each get exactly one Effect. */
  readonly events: number;
  /** Extra invoices whose Effect the ledger refuses for good (they must be dead-lettered). */
  readonly rejected: number;
  readonly kills: number;
  /** The driver's pace, invoices per second (it sets the length of the run). */
  readonly perSecond: number;
  readonly driverConcurrency: number;
  readonly faults: Readonly<Record<string, unknown>>;
  /** How long the bots get to settle everything after the last invoice, at most. */
  readonly drainMs: number;
  /** Where in the run (fraction of the invoices issued) the second replica and the reload come. */
  readonly secondReplicaAt: number;
  readonly reloadAt: number;
};

// Faults on throughout. Streams are dropped every 2.5 s at the most: a reconnected stream with
// nothing to deliver gets the sandbox's offset checkpoint 1-1.5 s after it opens, and only an
// element resets the bot's reconnect backoff, so faster drops would let the backoff of an idle
// stream climb to its 30 s cap. The synchronous codes are transient (category 1 or 2) and add up
// to 10%; the completion errors are the asynchronous contention a busy participant reports.
const faults = (closeStreamsEveryMs: number): Readonly<Record<string, unknown>> => ({
  closeStreamsEveryMs,
  submitErrors: [
    { code: 'SEQUENCER_BACKPRESSURE', rate: 0.04 },
    { code: 'SERVICE_NOT_RUNNING', rate: 0.03 },
    { code: 'THREADPOOL_OVERLOADED', rate: 0.03 },
  ],
  completionErrors: [
    { code: 'LOCAL_VERDICT_LOCKED_CONTRACTS', rate: 0.03 },
    { code: 'MEDIATOR_SAYS_TX_TIMED_OUT', rate: 0.01 },
  ],
  loseSubmitResponseRate: 0.05,
  dropCompletionRate: 0.05,
  completionDelayMs: [0, 150],
  httpLatencyMs: [0, 10],
});

export const FULL_PLAN: ChaosPlan = {
  name: 'full',
  events: 10_000,
  rejected: 20,
  kills: 3,
  perSecond: 45,
  driverConcurrency: 8,
  faults: faults(4000),
  drainMs: 180_000,
  secondReplicaAt: 0.5,
  reloadAt: 0.6,
};

export const SMOKE_PLAN: ChaosPlan = {
  name: 'smoke',
  events: 500,
  rejected: 5,
  kills: 1,
  perSecond: 40,
  driverConcurrency: 8,
  faults: faults(2500),
  drainMs: 60_000,
  secondReplicaAt: 0.5,
  reloadAt: 0.6,
};

/**
 * Where the kills fall, as fractions of the invoices issued: one in each of `kills` equal slices
 * of 10%..90% of the run, at a seeded place inside it, so they are random but never bunched.
 */
export function killPoints(kills: number, random: Random): number[] {
  const out: number[] = [];
  for (let k = 0; k < kills; k++) out.push(0.1 + (0.8 * (k + random.next())) / kills);
  return out;
}

/**
 * Where the store's server crashes (`--store postgres`), as a fraction of the invoices issued: a
 * seeded place in 25%..75% of the run, while both replicas may be running and work is in flight.
 */
export function storeCrashPoint(random: Random): number {
  return 0.25 + 0.5 * random.next();
}
