import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { IllegalStateError } from '../../../src/core/illegal-state-error.js';
import type { CommitFence } from '../../../src/store/pg/commit-fence.js';
import { openPgQueries } from '../../../src/store/pg/open-pg-queries.js';
import { openPgStore, type PgStoreOptions } from '../../../src/store/pg/open-pg-store.js';
import type { PgStore } from '../../../src/store/pg/pg-store.js';
import { JournalCompactor } from '../../../src/runtime/journal-compactor.js';
import { decodingStore } from '../../../src/store/decoding-store.js';
import { StoreError } from '../../../src/store/store-error.js';
import { describeWithPg } from '../../support/describe-with-pg.js';
import { waitFor } from '../../support/wait-for.js';
import { recordingLogger } from '../../runtime/bot-fixture.js';
import { eventIntent } from '../store-fixtures.js';

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describeWithPg('the PostgreSQL store', (server) => {
  let url: string;
  let clock: FakeClock;
  let store: PgStore;
  let reader: pg.Client;

  beforeEach(async () => {
    url = await server().freshDatabase();
    clock = new FakeClock();
    store = await open();
    reader = await connectReader();
  });
  afterEach(async () => {
    await store.closeAsync().catch(() => undefined);
    await reader.end().catch(() => undefined);
  });

  async function connectReader(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    // The crash test kills its connection: that is expected, not an uncaught error.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  function open(options: Partial<PgStoreOptions> = {}): Promise<PgStore> {
    return openPgStore({ url, schema: 'lbtest', clock, ...options });
  }

  async function reopen(options: Partial<PgStoreOptions> = {}): Promise<PgStore> {
    await store.closeAsync();
    store = await open(options);
    return store;
  }

  /** What another connection sees: the committed rows. */
  async function committed(): Promise<Record<string, string>> {
    const { rows } = await reader.query<{ command_id: string; state: string }>(
      'SELECT command_id, state FROM lbtest.lb_intents ORDER BY command_id',
    );
    return Object.fromEntries(rows.map((r) => [r.command_id, r.state]));
  }

  function finish(commandId: string): void {
    store.transition(commandId, { to: 'submitted', submissionId: `sub-${commandId}` });
    store.transition(commandId, { to: 'succeeded', completionOffset: 99 });
  }

  it('commits the batches of one group together, and a reopen brings back what it committed', async () => {
    // A window long enough that only flush() commits the group.
    await reopen({ groupCommitWindowMs: 600_000 });
    clock.set(1_000);
    const a = eventIntent(1, 0, { deadline: 60_000, event: { updateId: 'upd-1' } });
    store.batch(() => {
      store.recordIntents([a, eventIntent(2)]);
      store.advanceCheckpoint(2);
    });
    store.transition(a.commandId, { to: 'submitted', submissionId: 's1' });
    expect(await committed()).toEqual({});
    const synced = store.sync();
    store.flush();
    await synced;
    expect(await committed()).toEqual({ 'lb-rule-1-0': 'submitted', 'lb-rule-2-0': 'pending' });
    const before = store.getIntent(a.commandId);
    await reopen();
    expect(store.getIntent(a.commandId)).toEqual(before);
    expect(store.getIntent(a.commandId)).toMatchObject({
      state: 'submitted',
      attempts: 1,
      submissionId: 's1',
      deadline: 60_000,
      payload: a.payload,
      actAs: ['Issuer::1220aa', 'Payer::1220bb'],
      createdAt: 1_000,
    });
    expect(store.getRecordedEvent(a.commandId)).toEqual({ updateId: 'upd-1' });
    expect(store.openIntents().map((i) => i.commandId)).toEqual(['lb-rule-1-0', 'lb-rule-2-0']);
    expect(store.checkpoint()).toBe(0);
  });

  it('keeps an intent above the checkpoint on a replay after a reopen, even once finished', async () => {
    store.batch(() => {
      store.recordIntents([eventIntent(5), eventIntent(6)]);
      store.advanceCheckpoint(6);
    });
    finish('lb-rule-6-0');
    await store.sync();
    await reopen();
    expect(store.checkpoint()).toBe(4);
    const { inserted, existing } = store.recordIntents([eventIntent(5), eventIntent(6)]);
    expect(inserted).toEqual([]);
    expect(existing.map((r) => [r.commandId, r.state])).toEqual([
      ['lb-rule-5-0', 'pending'],
      ['lb-rule-6-0', 'succeeded'],
    ]);
    expect(store.hasEventIntent('rule', 6, 0)).toBe(true);
  });

  it('moves the checkpoint as a low-watermark and keeps it per owner', async () => {
    store.batch(() => {
      store.recordIntents([eventIntent(3), eventIntent(4)]);
      store.advanceCheckpoint(10);
    });
    expect(store.checkpoint()).toBe(2);
    finish('lb-rule-4-0');
    expect(store.checkpoint()).toBe(2);
    finish('lb-rule-3-0');
    expect(store.checkpoint()).toBe(10);
    await store.sync();
    const { rows } = await reader.query(
      'SELECT owner, resume_offset, processed_offset FROM lbtest.lb_checkpoints',
    );
    expect(rows).toEqual([{ owner: 'default', resume_offset: '10', processed_offset: '10' }]);
    await reopen({ owner: 'other' });
    expect(store.checkpoint()).toBeUndefined();
    await reopen();
    expect(store.checkpoint()).toBe(10);
  });

  it('drops finished intents the checkpoint passed from memory; the database still answers', async () => {
    store.batch(() => {
      store.recordIntents([eventIntent(1), eventIntent(2)]);
      store.advanceCheckpoint(2);
    });
    finish('lb-rule-2-0');
    await store.sync();
    // Committed, but the checkpoint (0: offset 1 is open) has not passed it.
    expect(store.getIntent('lb-rule-2-0')?.state).toBe('succeeded');
    finish('lb-rule-1-0');
    await store.sync();
    store.advanceCheckpoint(3);
    await store.sync();
    expect(store.checkpoint()).toBe(3);
    expect(store.getIntent('lb-rule-1-0')).toBeUndefined();
    expect(store.getIntent('lb-rule-2-0')).toBeUndefined();
    expect(store.countByState().succeeded).toBe(0);
    const queries = store.queries();
    expect(await queries.getIntent('lb-rule-1-0')).toMatchObject({
      state: 'succeeded',
      completionOffset: 99,
    });
    expect((await queries.countByState()).succeeded).toBe(2);
    expect(await queries.getAttempts('lb-rule-1-0')).toMatchObject([
      { n: 1, submissionId: 'sub-lb-rule-1-0', outcome: 'succeeded' },
    ]);
    // Below the checkpoint memory cannot tell: the synchronous question is refused.
    expect(() => store.hasEventIntent('rule', 1, 0)).toThrow(/hasEventIntentAsync/);
    expect(await store.hasEventIntentAsync('rule', 1, 0)).toBe(true);
    expect(await store.hasEventIntentAsync('rule', 1, 1)).toBe(false);
    expect(await store.hasEventIntentAsync('other-rule', 1, 0)).toBe(false);
    // Above it memory is complete.
    expect(store.hasEventIntent('rule', 7, 0)).toBe(false);
  });

  it('holds finished intents above an old open one until it finishes, then drops them all', async () => {
    store.batch(() => {
      store.recordIntents([1, 2, 3, 4, 5].map((o) => eventIntent(o)));
      store.advanceCheckpoint(5);
    });
    for (const o of [2, 3, 4, 5]) finish(`lb-rule-${o}-0`);
    await store.sync();
    await turn();
    expect(store.checkpoint()).toBe(0);
    expect(store.countByState()).toMatchObject({ pending: 1, succeeded: 4 });
    finish('lb-rule-1-0');
    await store.sync();
    expect(store.checkpoint()).toBe(5);
    expect(store.countByState()).toMatchObject({ pending: 0, succeeded: 0 });
    expect((await store.queries().countByState()).succeeded).toBe(5);
  });

  it('keeps dead letters in memory across a reopen; requeues and purges them', async () => {
    clock.set(5_000);
    store.recordIntents([eventIntent(1, 0, { event: { e: 1 } }), eventIntent(2)]);
    store.transition('lb-rule-1-0', { to: 'dead-lettered', error: { code: 'BAD' } });
    store.transition('lb-rule-2-0', { to: 'dead-lettered', error: { code: 'WORSE' } });
    store.advanceCheckpoint(5);
    await store.sync();
    await reopen();
    expect(store.checkpoint()).toBe(5);
    expect(store.listDeadLetters().map((d) => [d.intent.commandId, d.error])).toEqual([
      ['lb-rule-1-0', { code: 'BAD' }],
      ['lb-rule-2-0', { code: 'WORSE' }],
    ]);
    expect(store.getDeadLetter('lb-rule-1-0')).toMatchObject({
      event: { e: 1 },
      deadLetteredAt: 5_000,
    });
    expect(await store.queries().getDeadLetter('lb-rule-1-0')).toEqual(
      store.getDeadLetter('lb-rule-1-0'),
    );
    const requeued = store.requeueDeadLetter('lb-rule-1-0');
    expect(requeued).toMatchObject({ state: 'pending', attempts: 0 });
    expect(() => store.requeueDeadLetter('lb-rule-1-0')).toThrow(IllegalStateError);
    expect(store.purgeDeadLetter('lb-rule-2-0')).toBe(true);
    expect(store.purgeDeadLetter('lb-rule-2-0')).toBe(false);
    await store.sync();
    expect(await committed()).toEqual({ 'lb-rule-1-0': 'pending' });
    expect(await store.queries().listDeadLetters()).toEqual([]);
  });

  it('writes a dead letter purged and recorded again in one commit as the new intent', async () => {
    clock.set(5_000);
    store.recordIntents([eventIntent(1, 0, { event: { e: 1 } })]);
    store.transition('lb-rule-1-0', { to: 'dead-lettered', error: { code: 'BAD' } });
    await store.sync();
    await reopen();
    clock.set(6_000);
    // One group: the purge leaves the folded row to delete; the new record replaces it in memory.
    expect(store.purgeDeadLetter('lb-rule-1-0')).toBe(true);
    store.recordIntents([eventIntent(1, 0, { event: { e: 2 } })]);
    await store.sync();
    expect(await committed()).toEqual({ 'lb-rule-1-0': 'pending' });
    expect(await store.queries().listDeadLetters()).toEqual([]);
    await reopen();
    expect(store.getIntent('lb-rule-1-0')).toMatchObject({ state: 'pending', attempts: 0 });
    expect(store.getDeadLetter('lb-rule-1-0')).toBeUndefined();
    expect(store.listDeadLetters()).toEqual([]);
  });

  it('keeps schedule slots and slot intents until their slot completes', async () => {
    store.beginSlot('daily', 60_000, 17);
    store.recordIntents([
      eventIntent(17, 0, {
        commandId: 'lb-daily-1',
        ruleId: 'daily',
        trigger: { kind: 'slot', slot: 60_000, contractId: null },
      }),
    ]);
    finish('lb-daily-1');
    store.advanceCheckpoint(100);
    await store.sync();
    await reopen();
    // The slot is still in progress: a re-run re-records its intent, which the store knows.
    expect(store.getSlotRecord('daily')).toMatchObject({
      inProgressSlot: 60_000,
      snapshotOffset: 17,
    });
    expect(store.getIntent('lb-daily-1')?.state).toBe('succeeded');
    store.completeSlot('daily', 60_000);
    store.advanceCheckpoint(101);
    await store.sync();
    expect(store.getIntent('lb-daily-1')).toBeUndefined();
    await reopen();
    expect(store.getIntent('lb-daily-1')).toBeUndefined();
    expect(store.listSlotRecords()).toEqual([{ ruleId: 'daily', lastCompletedSlot: 60_000 }]);
    expect(await store.queries().listSlotRecords()).toEqual(store.listSlotRecords());
  });

  it('lists intents from the database in the recent order, a page at a time', async () => {
    for (let i = 1; i <= 5; i++) {
      clock.set(i * 1_000);
      store.recordIntents([eventIntent(i)]);
    }
    clock.set(9_000);
    store.transition('lb-rule-2-0', { to: 'submitted', submissionId: 's' });
    await store.sync();
    const queries = store.queries();
    const page1 = await queries.listIntents({ order: 'recent', limit: 2 });
    expect(page1.map((r) => r.commandId)).toEqual(['lb-rule-2-0', 'lb-rule-5-0']);
    const last = page1.at(-1)!;
    const page2 = await queries.listIntents({
      order: 'recent',
      limit: 2,
      before: { updatedAt: last.updatedAt, commandId: last.commandId },
    });
    expect(page2.map((r) => r.commandId)).toEqual(['lb-rule-4-0', 'lb-rule-3-0']);
    expect(store.listIntents({ order: 'recent', limit: 2 })).toEqual(page1);
    const submitted = await queries.listIntents({ states: ['submitted'] });
    expect(submitted.map((r) => r.commandId)).toEqual(['lb-rule-2-0']);
    expect(await queries.listIntents({ ruleId: 'nope' })).toEqual([]);
    expect((await queries.listIntents()).map((r) => r.offset)).toEqual([1, 2, 3, 4, 5]);
  });

  it('rolls back a batch that throws, and refuses an async one', async () => {
    store.recordIntents([eventIntent(1)]);
    expect(() =>
      store.batch(() => {
        store.recordIntents([eventIntent(2)]);
        store.advanceCheckpoint(9);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(store.getIntent('lb-rule-2-0')).toBeUndefined();
    expect(() => store.batch(() => Promise.resolve())).toThrow(
      expect.objectContaining({ code: 'STORE_ASYNC_BATCH' }),
    );
    await store.sync();
    expect(await committed()).toEqual({ 'lb-rule-1-0': 'pending' });
  });

  it('compacts in SQL: finished intents older than the cutoff that the checkpoint passed', async () => {
    clock.set(1_000);
    store.recordIntents([eventIntent(1), eventIntent(2), eventIntent(30)]);
    finish('lb-rule-1-0');
    finish('lb-rule-30-0');
    store.advanceCheckpoint(10);
    await store.sync();
    clock.set(100_000);
    expect(await store.compactAsync(50_000)).toBe(1);
    expect(await committed()).toEqual({ 'lb-rule-2-0': 'pending', 'lb-rule-30-0': 'succeeded' });
  });

  it('the journal compactor deletes through compactAsync (also behind the decoding store) and logs the count', async () => {
    clock.set(1_000);
    store.recordIntents([eventIntent(1), eventIntent(2)]);
    finish('lb-rule-1-0');
    finish('lb-rule-2-0');
    store.advanceCheckpoint(5);
    await store.sync();
    clock.set(100_000);
    const logger = recordingLogger();
    const compactor = new JournalCompactor({
      store: decodingStore(store, (p) => p),
      clock,
      logger,
      retentionMs: 50_000,
    });
    expect(compactor.compactNow()).toBe(0);
    await waitFor(committed, (rows) => Object.keys(rows).length === 0, 10_000, 'the compaction');
    await waitFor(
      () => logger.lines,
      (lines) => lines.some((l) => l.msg === 'journal compacted'),
      10_000,
      'the log line',
    );
    expect(logger.lines.find((l) => l.msg === 'journal compacted')?.fields).toMatchObject({
      deleted: 2,
    });
  });

  it('commits one group at a time, in order, each in one statement', async () => {
    store.recordIntents([eventIntent(1)]);
    await turn();
    store.transition('lb-rule-1-0', { to: 'submitted', submissionId: 'a' });
    await turn();
    store.transition('lb-rule-1-0', { to: 'pending', nextAttemptAt: 5 });
    await store.sync();
    const { rows } = await reader.query(
      'SELECT state, attempts, next_attempt_at FROM lbtest.lb_intents',
    );
    expect(rows).toEqual([{ state: 'pending', attempts: 1, next_attempt_at: '5' }]);
  });

  it('refuses a commit that would write a new record over a finished row: nothing of it is written', async () => {
    store.batch(() => {
      store.recordIntents([eventIntent(1)]);
      store.advanceCheckpoint(1);
    });
    finish('lb-rule-1-0');
    store.advanceCheckpoint(2);
    await store.sync();
    expect(store.getIntent('lb-rule-1-0')).toBeUndefined();
    // Recorded without lookUpIntents (which the runtime always awaits first): memory takes it
    // for new, and its commit would reset the finished row, with the intent of offset 3 beside.
    store.batch(() => store.recordIntents([eventIntent(1), eventIntent(3)]));
    const failed = store.sync();
    await expect(failed).rejects.toMatchObject({ code: 'STORE_COMMIT_FAILED' });
    await expect(failed).rejects.toThrow(
      'the commit would have replaced the finished intent lb-rule-1-0 with a new record of it, so it was refused and nothing of it written',
    );
    expect(await committed()).toEqual({ 'lb-rule-1-0': 'succeeded' });
  });

  it('runs the fence at the start of each commit: a fenced commit fails the store (STORE_COMMIT_FAILED)', async () => {
    let fenced = false;
    const seen: string[][] = [];
    const fence: CommitFence = {
      async check(tx, holds) {
        seen.push(holds.map((h) => h.ruleId));
        const { rows } = await tx.query<{ x: number }>('SELECT 1 AS x');
        expect(rows).toEqual([{ x: 1 }]);
        if (fenced) throw new StoreError('STORE_FENCED', 'lease lost');
      },
    };
    await reopen({
      fence,
      holdsFor: (rules) => [...rules].map((ruleId) => ({ ruleId, generation: 1 })),
    });
    store.recordIntents([eventIntent(1)]);
    await store.sync();
    expect(seen).toEqual([['rule']]);
    fenced = true;
    store.recordIntents([eventIntent(2)]);
    await expect(store.sync()).rejects.toMatchObject({
      code: 'STORE_COMMIT_FAILED',
      cause: expect.objectContaining({ code: 'STORE_FENCED' }) as unknown,
    });
    expect(store.getIntent('lb-rule-2-0')).toBeUndefined();
    expect(() => store.recordIntents([eventIntent(3)])).toThrow(
      expect.objectContaining({ code: 'STORE_COMMIT_FAILED' }),
    );
    expect(await committed()).toEqual({ 'lb-rule-1-0': 'pending' });
  });

  it('throws STORE_CLOSED after close, and close is idempotent', async () => {
    await store.closeAsync();
    store.close();
    expect(() => store.checkpoint()).toThrow(expect.objectContaining({ code: 'STORE_CLOSED' }));
    store = await open();
  });

  it('in exclusive mode, a second writer of the same schema and owner fails instead of sharing it', async () => {
    await reopen({ exclusive: true });
    await expect(open({ exclusive: true })).rejects.toMatchObject({
      code: 'STORE_LOCKED',
      message: expect.stringContaining('(schema lbtest)') as unknown,
    });
    const other = await open({ exclusive: true, owner: 'other' });
    await other.closeAsync();
    await reopen({ exclusive: true });
  });

  it('refuses a database newer than this build', async () => {
    await reader.query(
      `INSERT INTO lbtest.lb_schema_versions (component, version) VALUES ('journal', 99)`,
    );
    await expect(open()).rejects.toMatchObject({ code: 'STORE_SCHEMA_TOO_NEW' });
    // The CLI's reads (state export, dead-letters list) refuse it too, instead of misreading it.
    await expect(openPgQueries({ url, schema: 'lbtest' })).rejects.toMatchObject({
      code: 'STORE_SCHEMA_TOO_NEW',
    });
  });

  it('two instances opening a fresh database at once both open it, migrated once', async () => {
    const fresh = await server().freshDatabase();
    const [a, b] = await Promise.all([
      openPgStore({ url: fresh, schema: 'both', clock }),
      openPgStore({ url: fresh, schema: 'both', clock }),
    ]);
    await a.closeAsync();
    await b.closeAsync();
    const c = new pg.Client({ connectionString: fresh });
    await c.connect();
    try {
      // "both" is a reserved word: the store quotes every identifier.
      const { rows } = await c.query('SELECT count(*)::int AS n FROM "both".lb_schema_versions');
      expect(rows).toEqual([{ n: 2 }]);
    } finally {
      await c.end();
    }
  });

  it('never shows the password of the URL in an open error', async () => {
    const withPassword = new URL(server().url('no_such_database'));
    withPassword.username = 'ledgerbot';
    withPassword.password = 's3cr3t-pw';
    const err = await openPgStore({ url: withPassword.toString(), clock }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: 'STORE_OPEN_FAILED' });
    const message = (err as Error).message;
    expect(message).toContain('no_such_database');
    expect(message).toContain('ledgerbot:***@127.0.0.1');
    expect(message).not.toContain('s3cr3t');
    expect(JSON.stringify(err)).not.toContain('s3cr3t');
    const unreachable = await openPgStore({
      url: 'postgres://bot:hunter2@127.0.0.1:1/db',
      clock,
      connectTimeoutMs: 2_000,
    }).catch((e: unknown) => e);
    expect((unreachable as Error).message).toMatch(
      /^cannot open the PostgreSQL state store at postgres:\/\/bot:\*\*\*@127\.0\.0\.1:1\/db \(schema ledgerbot\): .*ECONNREFUSED/,
    );
    expect((unreachable as Error).message).not.toContain('hunter2');
    await expect(openPgStore({ url, schema: 'Bad-Name', clock })).rejects.toMatchObject({
      code: 'STORE_BAD_ARGUMENT',
    });
  });

  // Last: it crashes the server the other tests share.
  it('a server crash mid-run fails the commit (STORE_COMMIT_FAILED); a reopen finds every committed change and nothing half-committed', async () => {
    const recordEvent = (offset: number): void =>
      store.batch(() => {
        store.recordIntents([eventIntent(offset, 0), eventIntent(offset, 1)]);
        store.advanceCheckpoint(offset);
      });
    let synced = 0;
    let offset = 0;
    const writing = (async (): Promise<unknown> => {
      for (;;) {
        for (let k = 0; k < 5; k++) recordEvent(++offset);
        try {
          await store.sync();
        } catch (err) {
          return err;
        }
        synced = offset;
      }
    })();
    while (synced < 100) await turn();
    server().stop('immediate');
    const failure = await writing;
    expect(failure).toMatchObject({ code: 'STORE_COMMIT_FAILED' });
    expect(() => recordEvent(offset + 1)).toThrow(
      expect.objectContaining({ code: 'STORE_COMMIT_FAILED' }),
    );
    // Memory went back to what was committed: nothing the failed commit held is visible.
    expect(store.getIntent(`lb-rule-${offset}-0`)).toBeUndefined();
    await store.closeAsync();
    server().start();
    store = await open();
    reader = await connectReader();
    const rows = await committed();
    const offsets = new Set(Object.keys(rows).map((id) => Number(id.split('-')[2])));
    // Everything a resolved sync promised is there; every event has both of its intents.
    for (let o = 1; o <= synced; o++) expect(offsets.has(o)).toBe(true);
    for (const o of offsets) {
      expect(rows[`lb-rule-${o}-0`]).toBe('pending');
      expect(rows[`lb-rule-${o}-1`]).toBe('pending');
    }
    const highest = Math.max(...offsets);
    expect(highest).toBeGreaterThanOrEqual(synced);
    // The checkpoint (0: the first event is still open) never passed an event it lacks.
    expect(store.checkpoint()).toBe(0);
    expect(store.openIntents()).toHaveLength(offsets.size * 2);
  }, 60_000);
});
