/**
 * The group commit finds the rows it updates by their key however much the table has grown since
 * the connection first ran it. Its statement is prepared once per connection; PostgreSQL then
 * plans it once for any values (a generic plan) after five runs, from the statistics of the
 * moment: a journal still nearly empty. That plan read lb_intents in full at every commit (the
 * bench's bot-pg: 14,039 sequential scans over 152 million rows for 20,000 intents, 258
 * commands/s). The store's connections plan each run with its values (plan_cache_mode).
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { openPgStore, PLAN_OPTION } from '../../../src/store/pg/open-pg-store.js';
import { withStartupOption } from '../../../src/store/pg/with-startup-option.js';
import type { PgStore } from '../../../src/store/pg/pg-store.js';
import { describeWithPg } from '../../support/describe-with-pg.js';
import { eventIntent } from '../store-fixtures.js';

const PER_COMMIT = 25;
/** Rows in lb_intents before the commits measured. */
const GROWN = 8_000;
const MEASURED = 20;

describeWithPg('the PostgreSQL group commit', (server) => {
  it('updates a journal grown on the same connection through its key, not by reading it', async () => {
    const url = await server().freshDatabase();
    // One connection: every commit runs where the statement was first prepared and run.
    const store = await openPgStore({ url, schema: 'lbplan', clock: new FakeClock(), poolSize: 1 });
    const reader = new pg.Client({ connectionString: url });
    await reader.connect();
    let next = 0;
    /** Records PER_COMMIT intents (one commit), then submits them (another). */
    const commits = async (count: number): Promise<void> => {
      for (let c = 0; c < count; c++) {
        const intents = Array.from({ length: PER_COMMIT }, () => eventIntent(next++));
        store.recordIntents(intents);
        await store.sync();
        for (const i of intents)
          store.transition(i.commandId, { to: 'submitted', submissionId: 's' });
        await store.sync();
      }
    };
    /** Rows read by sequential scans of lb_intents, as the statistics have them. */
    const rowsRead = async (s: PgStore): Promise<number> => {
      // A session reports its statistics at the end of a transaction at least 1 s after its last
      // report: wait, then commit once more.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await commitOne(s);
      await reader.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await reader.query<{ n: string | null }>(
        `SELECT seq_tup_read AS n FROM pg_stat_user_tables
         WHERE schemaname = 'lbplan' AND relname = 'lb_intents'`,
      );
      return Number(rows[0]?.n ?? 0);
    };
    const commitOne = async (s: PgStore): Promise<void> => {
      s.recordIntents([eventIntent(next++)]);
      await s.sync();
    };
    try {
      await commits(GROWN / PER_COMMIT);
      const before = await rowsRead(store);
      await commits(MEASURED);
      const read = (await rowsRead(store)) - before;
      // A plan that reads the table at each of these 40 commits reads some 330,000 rows.
      expect(read).toBeLessThan(GROWN);
    } finally {
      await store.closeAsync();
      await reader.end();
    }
  }, 60_000);

  it('keeps the options the URL gives beside its own', async () => {
    const url = await server().freshDatabase();
    // A statement timeout of 1 ms: the schema's migration cannot finish under it.
    const timeout = encodeURIComponent('-c statement_timeout=1');
    const refused = openPgStore({
      url: `${url}?options=${timeout}`,
      schema: 'lbopts',
      clock: new FakeClock(),
    });
    await expect(refused).rejects.toThrow(/statement timeout/);
    // The user's own setting fails the open as a wrong password does: the code, the database.
    await expect(refused).rejects.toMatchObject({
      code: 'STORE_OPEN_FAILED',
      message: expect.stringContaining('cannot open the PostgreSQL state store at') as unknown,
    });
    const store = await openPgStore({ url, schema: 'lbopts', clock: new FakeClock() });
    await store.closeAsync();
    // Both settings, as the store's connections make them (pg takes the URL's options only).
    const withUrlOptions = `${url}?options=${encodeURIComponent('-c statement_timeout=4321')}`;
    const client = new pg.Client(withStartupOption(withUrlOptions, PLAN_OPTION));
    await client.connect();
    try {
      const setting = async (name: string): Promise<unknown> =>
        (await client.query<Record<string, unknown>>(`SHOW ${name}`)).rows[0]?.[name];
      expect(await setting('statement_timeout')).toBe('4321ms');
      expect(await setting('plan_cache_mode')).toBe('force_custom_plan');
    } finally {
      await client.end();
    }
  });
});
