import pg from 'pg';
import { expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import { Admission } from '../../../src/runtime/admission.js';
import { BotMetrics } from '../../../src/runtime/bot-metrics.js';
import { InFlightIntents } from '../../../src/runtime/in-flight-intents.js';
import { sendAttempt, type SendAttemptDeps } from '../../../src/runtime/send-attempt.js';
import { TokenBucket } from '../../../src/runtime/token-bucket.js';
import { trackedIntent } from '../../../src/runtime/tracked-intent.js';
import { FLEET_PG_MIGRATIONS } from '../../../src/store/pg/fleet-pg-migrations.js';
import { LeaseBook } from '../../../src/store/pg/lease-book.js';
import { leaseFence } from '../../../src/store/pg/lease-fence.js';
import { openPgStore } from '../../../src/store/pg/open-pg-store.js';
import { runPgMigrations } from '../../../src/store/pg/run-pg-migrations.js';
import { describeWithPg } from '../../support/describe-with-pg.js';
import { newIntent, payload } from '../../runtime/tracker-fixture.js';

// Issue 18's hardening question: does a fleet member woken from a pause submit an intent of a
// rule whose lease it may have lost before it learns so? No: an attempt is journalled before it
// is submitted (write-ahead), and the commit's fence first asks the keeper's LeaseBook, by the
// member's own clock, without a round trip. A lease past its time refuses the commit, so the
// attempt is dropped before the participant sees it.

const LEASE_MS = 3_000;
const HOLD = { ruleId: 'accept', generation: 1 };

describeWithPg('a fleet member submitting after a pause', (server) => {
  it("holds an attempt whose rule's lease is past its time by the member's own clock", async () => {
    const url = await server().freshDatabase();
    const clock = new FakeClock(Date.UTC(2026, 10, 26, 21));
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const store = await openPgStore({
      url,
      schema: 'fleet',
      clock,
      rules: [HOLD.ruleId],
      holdsFor: (ids) => [...ids].map((ruleId) => ({ ...HOLD, ruleId })),
      fence: leaseFence({
        schema: 'fleet',
        instanceId: 'me',
        isValid: (hold) => book.isValid(hold),
        lost: (holds) => lost.push(...holds),
      }),
    });
    const book = new LeaseBook(clock, LEASE_MS);
    const lost: { ruleId: string; generation: number }[] = [];
    try {
      await runPgMigrations(db, 'fleet', [FLEET_PG_MIGRATIONS]);
      // The lease as the database has it: this member's, at generation 1, for good.
      await db.query(
        `INSERT INTO fleet.lb_fleet_leases (rule_id, owner, generation, expires_at, acquired_at)
         VALUES ('accept', 'me', 1, now() + interval '1 hour', now())`,
      );
      book.acquired([HOLD], clock.now());

      const metrics = new BotMetrics();
      const intents = new InFlightIntents({ store, clock, logger: silentLogger, metrics });
      const submitted: string[] = [];
      const deps: SendAttemptDeps = {
        ledger: {
          submit: (body) => {
            submitted.push(body.submissionId ?? '');
            return Promise.resolve({});
          },
        },
        store,
        clock,
        random: new SeededRandom(7),
        metrics,
        intents,
        rateLimiter: () => new TokenBucket(clock, 1000, 1000),
        signal: new AbortController().signal,
        closing: () => false,
      };
      const [record] = store.recordIntents([newIntent(10)]).inserted;
      const permit = await new Admission(10).acquire(record!.ruleId, 4);
      const t = trackedIntent({ ...record!, payload: payload() }, permit, {
        kind: 'offset',
        offset: 10,
      });
      intents.add(t);

      // Within the lease: journalled, then submitted.
      expect(await sendAttempt(deps, t)).toEqual({ kind: 'sent', seq: t.seq });
      expect(submitted).toHaveLength(1);

      // Paused past the lease (the database still names this member: nobody took it yet).
      await clock.advance(LEASE_MS);
      expect(await sendAttempt(deps, t)).toEqual({ kind: 'stopped' });
      expect(submitted).toHaveLength(1);
      expect(lost).toEqual([HOLD]);
      expect(intents.has(t.commandId)).toBe(false);
      const { rows } = await db.query<{ state: string; submission_id: string }>(
        `SELECT state, submission_id FROM fleet.lb_intents WHERE command_id = $1`,
        [t.commandId],
      );
      expect(rows).toEqual([{ state: 'submitted', submission_id: submitted[0] }]);
    } finally {
      await store.closeAsync().catch(() => undefined);
      await db.end();
    }
  });
});
