import { afterEach, describe, expect, it } from 'vitest';
import { LedgerTransportError } from '../../../src/ledger/ledger-transport-error.js';
import { journalRoutes } from '../../../src/runtime/ops/journal-routes.js';
import { HttpProblem } from '../../../src/runtime/ops/ops-http.js';
import { storeQueries } from '../../../src/store/store-queries.js';
import { botFixture, NOTE_RULES, recordingLogger, rules, type BotFixture } from '../bot-fixture.js';

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

describe('POST /rules/{id}/run-slot', () => {
  it('answers 503 UNAVAILABLE when the participant cannot be reached for the slot', async () => {
    f = botFixture({ rules: rules(NOTE_RULES) });
    const fx = f;
    const route = journalRoutes({
      bot: fx.bot,
      store: fx.store,
      queries: storeQueries(fx.store),
      clock: fx.clock,
      log: recordingLogger(),
      runSlot: () =>
        Promise.reject(
          new LedgerTransportError(
            'connect',
            'GET /v2/state/ledger-end',
            'GET /v2/state/ledger-end: could not connect to 127.0.0.1:9',
          ),
        ),
    }).find((r) => r.method === 'POST' && r.pattern.test('/rules/x/run-slot'))!;
    const answer = await Promise.resolve()
      .then(() => route.handle(['note'], new URL('http://h/rules/note/run-slot'), {} as never))
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(answer).toBeInstanceOf(HttpProblem);
    expect(answer).toMatchObject({
      status: 503,
      code: 'UNAVAILABLE',
      message:
        'the participant cannot be reached: GET /v2/state/ledger-end: could not connect to 127.0.0.1:9',
    });
  });
});
