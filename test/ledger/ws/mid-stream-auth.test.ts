// When the token behind an open stream expires, Canton ends the stream with an
// ACCESS_TOKEN_EXPIRED frame; when the user's rights change, STALE_STREAM_AUTHORIZATION (both
// category 2, NOTES.md "Corrections"). The stream must come back at once with a fresh token.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthProvider } from '../../../src/ledger/auth/auth-provider.js';
import { classify } from '../../../src/ledger/classify.js';
import { isStreamAuthExpiry, needsFreshToken } from '../../../src/ledger/error-checks.js';
import { parseJsCantonError } from '../../../src/ledger/js-canton-error.js';
import { LedgerApiError } from '../../../src/ledger/ledger-api-error.js';
import { activeContractsSocket } from '../../../src/ledger/ws/active-contracts-socket.js';
import { streamCompletions } from '../../../src/ledger/ws/completion-stream.js';
import { streamUpdates } from '../../../src/ledger/ws/update-stream.js';
import { FakeWsServer } from '../../support/fake-ws-server.js';
import { accessTokenExpired, staleStreamAuthorization } from '../canton-samples.js';
import {
  ALICE,
  UNAUTHENTICATED_ERROR,
  UPDATE_FORMAT,
  acsFrame,
  completionFrame,
  transactionFrame,
} from './ws-fixtures.js';
import { waitFor } from '../../support/wait-for.js';
import { AutoClock, drain, recordingLogger, testContext } from './ws-test-helpers.js';

/** An auth provider whose token changes each time it is invalidated, like a refreshed one. */
class RotatingAuth implements AuthProvider {
  generation = 1;
  invalidations = 0;
  token(): Promise<string | undefined> {
    return Promise.resolve(`token-${this.generation}`);
  }
  invalidate(): void {
    this.invalidations += 1;
    this.generation += 1;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const tokenOf = (protocolHeader: string | undefined): string | undefined =>
  /jwt\.token\.([^,]+)/.exec(protocolHeader ?? '')?.[1];

let server: FakeWsServer;
let stop: AbortController;
beforeEach(async () => {
  server = await FakeWsServer.start();
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

describe('a stream ended for a lapsed token', () => {
  it.each([
    ['ACCESS_TOKEN_EXPIRED', accessTokenExpired],
    ['STALE_STREAM_AUTHORIZATION', staleStreamAuthorization],
  ])(
    '%s: the updates stream resumes with a fresh token, quickly, without an error',
    async (code, frame) => {
      const auth = new RotatingAuth();
      const clock = new AutoClock();
      const logger = recordingLogger();
      const delays: number[] = [];
      const s = streamUpdates(
        testContext(server.url, { auth, clock, logger }),
        { beginExclusive: 4, updateFormat: UPDATE_FORMAT },
        { signal: stop.signal, onReconnect: (_a, delayMs) => delays.push(delayMs) },
      );
      const { got, ended } = drain(s);
      const first = await server.nextConnection();
      expect(tokenOf(first.handshake.protocolHeader)).toBe('token-1');
      await first.request();
      await first.send(transactionFrame(5));
      await first.send(frame);
      first.close();

      const second = await server.nextConnection();
      expect(tokenOf(second.handshake.protocolHeader)).toBe('token-2');
      expect(await second.request()).toMatchObject({ beginExclusive: 5 });
      await second.send(transactionFrame(6));
      await waitFor(
        () => got.length,
        (n) => n === 2,
        2_000,
        'got: 2',
      );

      expect(got.map((u) => u.offset)).toEqual([5, 6]);
      expect(auth.invalidations).toBe(1);
      expect(s.reconnects).toBe(1);
      // The category's "1 second" hint is for contention; the new token is ready now.
      expect(delays[0]).toBeLessThan(1_000);
      expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
      expect(logger.lines.some((l) => l.level === 'info' && l.fields.errorCode === code)).toBe(
        true,
      );
      stop.abort();
      expect((await ended).error).toMatchObject({ name: 'AbortError' });
    },
  );

  it('the completion stream does the same', async () => {
    const auth = new RotatingAuth();
    const s = streamCompletions(
      testContext(server.url, { auth }),
      { userId: 'ledgerbot', parties: [ALICE], beginExclusive: 0 },
      { signal: stop.signal },
    );
    const { got } = drain(s);
    const first = await server.nextConnection();
    await first.request();
    await first.send(completionFrame(3));
    await first.send(accessTokenExpired);
    first.close();
    const second = await server.nextConnection();
    expect(tokenOf(second.handshake.protocolHeader)).toBe('token-2');
    expect(await second.request()).toMatchObject({ beginExclusive: 3 });
    await second.send(completionFrame(4));
    await waitFor(
      () => got.length,
      (n) => n === 2,
      2_000,
      'got: 2',
    );
    expect(auth.invalidations).toBe(1);
  });

  it('the active contracts socket retries a snapshot cut before its first element', async () => {
    const auth = new RotatingAuth();
    const acs = drain(
      activeContractsSocket(
        testContext(server.url, { auth }),
        { activeAtOffset: 20, eventFormat: { filtersByParty: {}, verbose: false } },
        { signal: stop.signal },
      ),
    );
    const first = await server.nextConnection();
    await first.request();
    await first.send(accessTokenExpired);
    first.close();
    const second = await server.nextConnection();
    expect(tokenOf(second.handshake.protocolHeader)).toBe('token-2');
    await second.request();
    await second.send(acsFrame(1));
    second.close();
    expect(await acs.ended).toEqual({});
    expect(acs.got).toHaveLength(1);
  });

  it('a fresh token that is refused at once still ends in backoff, not a tight loop', async () => {
    const auth = new RotatingAuth();
    const clock = new AutoClock();
    const s = streamUpdates(
      testContext(server.url, { auth, clock }),
      { beginExclusive: 4, updateFormat: UPDATE_FORMAT },
      { signal: stop.signal, backoff: { initialMs: 100, maxMs: 10_000 } },
    );
    drain(s);
    for (let i = 0; i < 4; i++) {
      const conn = await server.nextConnection();
      await conn.request();
      await conn.send(accessTokenExpired);
      conn.close();
    }
    await waitFor(
      () => clock.sleeps.length,
      (n) => n >= 4,
      2_000,
      'four backoff sleeps',
    );
    // Attempts 0..3 of a 100 ms doubling backoff (jittered): the waits grow.
    expect(clock.sleeps[3]!).toBeGreaterThan(clock.sleeps[0]!);
  });
});

describe('the auth helpers', () => {
  const frameError = (body: unknown, status?: number): LedgerApiError =>
    new LedgerApiError(parseJsCantonError(body)!, 'WS /v2/updates', status);

  it('tell a lapsed stream authorization and a token that needs replacing', () => {
    const expired = frameError(accessTokenExpired);
    const stale = frameError(staleStreamAuthorization);
    expect(isStreamAuthExpiry(expired)).toBe(true);
    expect(isStreamAuthExpiry(stale)).toBe(true);
    expect(classify(expired)).toBe('retryable');
    expect(needsFreshToken(expired)).toBe(true);
    expect(needsFreshToken(stale)).toBe(true);
    expect(needsFreshToken(frameError(UNAUTHENTICATED_ERROR))).toBe(true);
    expect(needsFreshToken(frameError({ ...UNAUTHENTICATED_ERROR, grpcCodeValue: 7 }, 401))).toBe(
      true,
    );
    expect(needsFreshToken(frameError({ ...UNAUTHENTICATED_ERROR, grpcCodeValue: 7 }))).toBe(false);
    expect(isStreamAuthExpiry(new Error('ACCESS_TOKEN_EXPIRED'))).toBe(false);
  });
});
