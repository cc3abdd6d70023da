import { describe, expect, it } from 'vitest';
import { AbortError } from '../../../src/core/abort-error.js';
import { backoffDelay, type BackoffPolicy } from '../../../src/core/backoff.js';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import { parseJsCantonError } from '../../../src/ledger/js-canton-error.js';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../../src/ledger/ledger-transport-error.js';
import {
  ResumableStream,
  type ResumableStreamOptions,
} from '../../../src/ledger/ws/resumable-stream.js';
import { PRUNED_ERROR, SHUTDOWN_ERROR, UNAUTHENTICATED_ERROR } from './ws-fixtures.js';
import { AutoClock, caught, collect, recordingLogger } from './ws-test-helpers.js';

type El = { kind: 'tx' | 'checkpoint'; offset: number };
type Step = { elements: El[]; then: 'end' | Error; before?: () => void };

const POLICY: BackoffPolicy = { initialMs: 100, maxMs: 1_600 };
const dropped = (): LedgerTransportError =>
  new LedgerTransportError(
    'closed',
    'WS /v2/updates',
    'the websocket closed abnormally (code 1006)',
  );
const apiError = (body: unknown): LedgerApiError =>
  new LedgerApiError(parseJsCantonError(body)!, 'WS /v2/updates');

function scripted(steps: Step[]): {
  open: ResumableStreamOptions<El>['open'];
  begins: number[];
} {
  const begins: number[] = [];
  const open = (beginExclusive: number): AsyncIterable<El> => {
    begins.push(beginExclusive);
    const step = steps[begins.length - 1];
    return (async function* () {
      await Promise.resolve();
      if (step === undefined) throw new Error(`unexpected open #${begins.length}`);
      step.before?.();
      for (const e of step.elements) yield e;
      if (step.then !== 'end') throw step.then;
    })();
  };
  return { open, begins };
}

function stream(
  steps: Step[],
  extra: Partial<ResumableStreamOptions<El>> = {},
): {
  s: ResumableStream<El>;
  begins: number[];
  clock: FakeClock;
  logger: ReturnType<typeof recordingLogger>;
} {
  const { open, begins } = scripted(steps);
  const clock = (extra.clock as FakeClock | undefined) ?? new AutoClock();
  const logger = recordingLogger();
  const s = new ResumableStream<El>({
    name: 'updates',
    open,
    offsetOf: (e) => e.offset,
    beginExclusive: 10,
    clock,
    random: new SeededRandom(42),
    logger,
    backoff: POLICY,
    ...extra,
  });
  return { s, begins, clock, logger };
}

const tx = (offset: number): El => ({ kind: 'tx', offset });
const cp = (offset: number): El => ({ kind: 'checkpoint', offset });

describe('ResumableStream', () => {
  it('reopens from the last offset after a drop, checkpoints included', async () => {
    const { s, begins } = stream([
      { elements: [tx(11), tx(12)], then: dropped() },
      { elements: [tx(13), cp(20)], then: dropped() },
      { elements: [tx(21)], then: new LedgerApiError(parseJsCantonError(PRUNED_ERROR)!, 'WS') },
    ]);
    const got: El[] = [];
    const err = await caught(async () => {
      for await (const e of s) got.push(e);
    });
    expect(got.map((e) => e.offset)).toEqual([11, 12, 13, 20, 21]);
    expect(begins).toEqual([10, 12, 20]);
    expect(s.lastOffset).toBe(21);
    expect(err).toBeInstanceOf(LedgerApiError);
    expect((err as LedgerApiError).code).toBe('PARTICIPANT_PRUNED_DATA_ACCESSED');
  });

  it('backs off with jitter from the injected Random and Clock, resetting after an element', async () => {
    const reconnects: [number, number, unknown][] = [];
    const { s, begins, clock } = stream(
      [
        { elements: [], then: dropped() },
        { elements: [], then: dropped() },
        { elements: [], then: dropped() },
        { elements: [tx(11)], then: dropped() },
        { elements: [], then: apiError(PRUNED_ERROR) },
      ],
      { onReconnect: (attempt, delayMs, error) => reconnects.push([attempt, delayMs, error]) },
    );
    await caught(() => collect(s));
    const twin = new SeededRandom(42);
    const expected = [0, 1, 2, 0].map((attempt) => backoffDelay(POLICY, attempt, twin));
    expect((clock as AutoClock).sleeps).toEqual(expected);
    expect(reconnects.map(([a, d]) => [a, d])).toEqual([
      [1, expected[0]],
      [2, expected[1]],
      [3, expected[2]],
      [1, expected[3]],
    ]);
    expect(reconnects[0]![2]).toBeInstanceOf(LedgerTransportError);
    expect(expected[2]).toBeGreaterThanOrEqual(200);
    expect(begins).toEqual([10, 10, 10, 10, 11]);
    expect(s.reconnects).toBe(4);
  });

  it('waits at least what the participant asks for', async () => {
    const { s, clock } = stream([
      { elements: [], then: apiError(SHUTDOWN_ERROR) },
      { elements: [], then: apiError(PRUNED_ERROR) },
    ]);
    await caught(() => collect(s));
    // ABORTED_DUE_TO_SHUTDOWN is retried after 10 s even though the policy says ~100 ms.
    expect((clock as AutoClock).sleeps).toEqual([10_000]);
  });

  it('resumes an open-ended stream that the server closed normally', async () => {
    const { s, begins, logger } = stream([
      { elements: [cp(15)], then: 'end' },
      { elements: [tx(16)], then: apiError(PRUNED_ERROR) },
    ]);
    const got: El[] = [];
    await caught(async () => {
      for await (const e of s) got.push(e);
    });
    expect(got.map((e) => e.offset)).toEqual([15, 16]);
    expect(begins).toEqual([10, 15]);
    expect(logger.lines.find((l) => l.level === 'warn')?.fields).toMatchObject({
      stream: 'updates',
      attempt: 1,
      offset: 15,
      reason: 'closed by the server',
    });
  });

  it('ends a bounded stream on a normal close and resumes it after a drop', async () => {
    const { s, begins } = stream(
      [
        { elements: [tx(11)], then: dropped() },
        { elements: [tx(14)], then: 'end' },
      ],
      { endInclusive: 15 },
    );
    expect((await collect(s)).map((e) => e.offset)).toEqual([11, 14]);
    expect(begins).toEqual([10, 11]);
  });

  it('stops a bounded stream at its end offset without reconnecting', async () => {
    const { s, begins } = stream([{ elements: [tx(11), tx(15)], then: dropped() }], {
      endInclusive: 15,
    });
    expect((await collect(s)).map((e) => e.offset)).toEqual([11, 15]);
    expect(begins).toEqual([10]);
    const empty = stream([], { beginExclusive: 15, endInclusive: 15 });
    expect(await collect(empty.s)).toEqual([]);
    expect(empty.begins).toEqual([]);
  });

  it('retries an auth rejection once with a fresh token, then gives up', async () => {
    const { s, begins } = stream([
      { elements: [tx(11)], then: apiError(UNAUTHENTICATED_ERROR) },
      { elements: [tx(12)], then: apiError(UNAUTHENTICATED_ERROR) },
      { elements: [], then: apiError(UNAUTHENTICATED_ERROR) },
    ]);
    const err = await caught(() => collect(s));
    expect(begins).toEqual([10, 11, 12]);
    expect((err as LedgerApiError).error.grpcCodeValue).toBe(16);
  });

  it('resets the backoff after a connection that stayed up long enough', async () => {
    const clock = new AutoClock();
    const { s } = stream(
      [
        { elements: [], then: dropped() },
        { elements: [], then: dropped(), before: () => clock.set(clock.now() + 60_000) },
        { elements: [], then: apiError(PRUNED_ERROR) },
      ],
      { clock, stableAfterMs: 30_000 },
    );
    await caught(() => collect(s));
    const twin = new SeededRandom(42);
    expect(clock.sleeps).toEqual([backoffDelay(POLICY, 0, twin), backoffDelay(POLICY, 0, twin)]);
  });

  it('does not back off further while each connection outlives the wait its drop costs', async () => {
    // Time a connection stays up is added on top of the clock (AutoClock's own advance would
    // overwrite a `set` made while it runs).
    const clock = new (class extends AutoClock {
      up = 0;
      override now(): number {
        return super.now() + this.up;
      }
    })();
    const upFor = (ms: number) => () => void (clock.up += ms);
    // POLICY: 100 ms doubling to 1.6 s. Up for 150 ms after a wait of at most 100 ms: back to
    // attempt 0; up for 10 ms: the backoff grows; up for 500 ms after a wait of at most 400 ms: reset.
    const { s } = stream(
      [
        { elements: [], then: dropped(), before: upFor(150) },
        { elements: [], then: dropped(), before: upFor(150) },
        { elements: [], then: dropped(), before: upFor(10) },
        { elements: [], then: dropped(), before: upFor(10) },
        { elements: [], then: dropped(), before: upFor(500) },
        { elements: [], then: apiError(PRUNED_ERROR) },
      ],
      { clock, stableAfterMs: 30_000 },
    );
    await caught(() => collect(s));
    const twin = new SeededRandom(42);
    expect(clock.sleeps).toEqual(
      [0, 0, 1, 2, 0].map((attempt) => backoffDelay(POLICY, attempt, twin)),
    );
  });

  it('throws AbortError when aborted while waiting to reconnect', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const { s, begins } = stream([{ elements: [tx(11)], then: dropped() }], {
      clock,
      signal: controller.signal,
    });
    const failure = caught(() => collect(s));
    for (let i = 0; i < 50 && clock.pendingTimers === 0; i++) await clock.advance(0);
    expect(clock.pendingTimers).toBe(1);
    controller.abort();
    expect(await failure).toBeInstanceOf(AbortError);
    expect(begins).toEqual([10]);
  });
});
