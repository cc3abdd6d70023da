import { describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import { FakeClock } from '../../src/core/fake-clock.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { AuthError } from '../../src/ledger/auth/auth-error.js';
import type { JsCantonError } from '../../src/ledger/js-canton-error.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import {
  awaitParticipant,
  type AwaitParticipantOptions,
} from '../../src/runtime/await-participant.js';
import { RuntimeError } from '../../src/runtime/runtime-error.js';

const URL = 'http://127.0.0.1:9';

function cantonError(code: string, category: number, grpc: number, status: number): LedgerApiError {
  const error: JsCantonError = {
    code,
    cause: `${code} cause`,
    correlationId: null,
    traceId: null,
    context: {},
    resources: [],
    errorCategory: category,
    grpcCodeValue: grpc,
    retryInfo: null,
    definiteAnswer: null,
  };
  return new LedgerApiError(error, 'GET /v2/state/ledger-end', status);
}

const refused = (): LedgerTransportError =>
  new LedgerTransportError('connect', 'GET /v2/state/ledger-end', 'connect ECONNREFUSED');
const unreadable = (status: number): LedgerTransportError =>
  new LedgerTransportError('bad-response', 'GET /v2/state/ledger-end', `HTTP ${status}`, {
    status,
  });

/** A participant whose ledger-end calls fail with `failures` in turn, then answer. */
function participant(failures: Error[], userError?: Error) {
  const calls = { ledgerEnd: 0, getUser: 0 };
  return {
    calls,
    ledger: {
      ledgerEnd: () => {
        calls.ledgerEnd += 1;
        const f = failures.shift();
        return f === undefined ? Promise.resolve(7) : Promise.reject(f);
      },
      getUser: () => {
        calls.getUser += 1;
        return userError === undefined ? Promise.resolve({}) : Promise.reject(userError);
      },
    },
  };
}

function start(
  ledger: AwaitParticipantOptions['ledger'],
  more: Partial<AwaitParticipantOptions> = {},
): { clock: FakeClock; reasons: (string | undefined)[]; done: Promise<unknown> } {
  const clock = new FakeClock();
  const reasons: (string | undefined)[] = [];
  const done = awaitParticipant({
    ledger,
    userId: 'bot',
    url: URL,
    clock,
    random: new SeededRandom(1),
    onWaiting: (r) => reasons.push(r),
    ...more,
  }).then(
    () => 'ok',
    (err: unknown) => err,
  );
  return { clock, reasons, done };
}

describe('awaitParticipant', () => {
  it('retries refused connections, 503s and UNAVAILABLE with growing delays, then returns', async () => {
    const p = participant([
      refused(),
      unreadable(503),
      cantonError('SERVICE_NOT_RUNNING', 1, 14, 503),
      refused(),
    ]);
    const { clock, reasons, done } = start(p.ledger);
    // Backoff 0.5 s doubling (equal jitter): 4 failures need at most 0.5 + 1 + 2 + 4 s.
    await clock.advance(7_500);
    expect(await done).toBe('ok');
    expect(p.calls).toEqual({ ledgerEnd: 5, getUser: 1 });
    expect(reasons.at(-1)).toBeUndefined();
    expect(reasons[0]).toBe(
      `waiting for the participant at ${URL} (attempt 1 failed: connect ECONNREFUSED)`,
    );
    expect(reasons[1]).toContain('attempt 2 failed: HTTP 503');
  });

  it('retries what a proxy or a starting participant answers, and calls that got no answer', async () => {
    const request = 'GET /v2/state/ledger-end';
    const lost = (['reset', 'timeout', 'closed'] as const).map(
      (failure) => new LedgerTransportError(failure, request, failure),
    );
    const p = participant([...[408, 429, 502, 503, 504].map(unreadable), ...lost]);
    const { clock, done } = start(p.ledger, { backoff: { initialMs: 10, maxMs: 10 } });
    await clock.advance(1_000);
    expect(await done).toBe('ok');
    expect(p.calls.ledgerEnd).toBe(9);
  });

  it('waits forever by default, and stops at once when aborted', async () => {
    const controller = new AbortController();
    const p = participant(Array.from({ length: 1000 }, refused));
    const { clock, done } = start(p.ledger, { signal: controller.signal });
    await clock.advance(3_600_000);
    expect(p.calls.ledgerEnd).toBeGreaterThan(100);
    controller.abort();
    expect(await done).toBeInstanceOf(AbortError);
  });

  it('gives up after timeoutMs with PARTICIPANT_UNREACHABLE and the last error', async () => {
    const p = participant(Array.from({ length: 1000 }, refused));
    const { clock, done } = start(p.ledger, { timeoutMs: 60_000 });
    await clock.advance(59_000);
    let settled = false;
    void done.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await clock.advance(1_000);
    const err = (await done) as RuntimeError;
    expect(err).toBeInstanceOf(RuntimeError);
    expect(err.code).toBe('PARTICIPANT_UNREACHABLE');
    expect(err.message).toMatch(/did not answer within 1m \(ledger\.startTimeout; \d+ attempt/);
    expect(err.message).toContain('last error: connect ECONNREFUSED');
  });

  it.each([
    ['a rejected token (401)', cantonError('UNAUTHENTICATED', 6, 16, 401), 'PARTICIPANT_REFUSED'],
    ['missing rights (403)', cantonError('PERMISSION_DENIED', 7, 7, 403), 'PARTICIPANT_REFUSED'],
    ['a wrong URL prefix (404 page)', unreadable(404), 'PARTICIPANT_REFUSED'],
    [
      'credentials the token endpoint refuses',
      new AuthError('AUTH_OAUTH2_REJECTED', 'invalid_client'),
      'PARTICIPANT_REFUSED',
    ],
  ])('fails at once on %s', async (_what, failure, code) => {
    const p = participant([failure]);
    const { done } = start(p.ledger);
    const err = (await done) as RuntimeError;
    expect(err.code).toBe(code);
    expect(p.calls.ledgerEnd).toBe(1);
  });

  it('fails at once with UNKNOWN_USER when the user does not exist', async () => {
    const p = participant([], cantonError('USER_NOT_FOUND', 11, 5, 404));
    const { done } = start(p.ledger);
    const err = (await done) as RuntimeError;
    expect(err.code).toBe('UNKNOWN_USER');
    expect(err.message).toContain('has no user "bot"');
  });

  it('does not look the user up when told not to (a participant without auth)', async () => {
    const p = participant([], cantonError('USER_NOT_FOUND', 11, 5, 404));
    const { done } = start(p.ledger, { checkUser: false });
    expect(await done).toBe('ok');
    expect(p.calls.getUser).toBe(0);
  });

  it('retries a token endpoint that is down', async () => {
    const p = participant([
      new AuthError('AUTH_OAUTH2_UNREACHABLE', 'idp down', { retryable: true }),
    ]);
    const { clock, done } = start(p.ledger);
    await clock.advance(1_000);
    expect(await done).toBe('ok');
  });
});
