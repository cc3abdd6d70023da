import { expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { openSqliteStore } from '../../../src/store/open-sqlite-store.js';
import { openPgStore } from '../../../src/store/pg/open-pg-store.js';
import { describeWithPg } from '../../support/describe-with-pg.js';
import { tempDir } from '../../support/temp-dir.js';
import { eventIntent } from '../store-fixtures.js';

describeWithPg('the PostgreSQL store as a JournalTransfer', (server) => {
  it('moves a SQLite journal into PostgreSQL and back, every field kept', async () => {
    const clock = new FakeClock();
    const dir = tempDir();
    const sqlite = openSqliteStore({ dir: dir.dir, clock });
    clock.set(1_000);
    sqlite.recordIntents([
      eventIntent(7, 0, { event: { e: 7 }, deadline: 99_000 }),
      eventIntent(9),
      eventIntent(12, 0, {
        commandId: 'lb-daily-1',
        ruleId: 'daily',
        trigger: { kind: 'slot', slot: 60_000, contractId: null },
      }),
    ]);
    clock.set(2_000);
    sqlite.transition('lb-rule-7-0', { to: 'submitted', submissionId: 's-7' });
    sqlite.transition('lb-rule-9-0', { to: 'dead-lettered', error: { code: 'X' } });
    sqlite.beginSlot('daily', 60_000, 12);
    sqlite.advanceCheckpoint(20);
    const journal = await sqlite.exportJournal();
    sqlite.close();

    const url = await server().freshDatabase();
    const pg = await openPgStore({ url, schema: 'moved', clock });
    await pg.importJournal(journal);
    // Memory follows what was imported: the bot resumes as it left off.
    expect(pg.checkpoint()).toBe(6);
    expect(pg.openIntents().map((i) => i.commandId)).toEqual(['lb-rule-7-0', 'lb-daily-1']);
    expect(pg.getDeadLetter('lb-rule-9-0')?.error).toEqual({ code: 'X' });
    expect(pg.getSlotRecord('daily')).toMatchObject({ inProgressSlot: 60_000 });
    expect(await pg.exportJournal()).toEqual(journal);
    await expect(pg.importJournal(journal)).rejects.toMatchObject({ code: 'STORE_NOT_EMPTY' });
    pg.transition('lb-rule-7-0', { to: 'succeeded' });
    await pg.sync();
    const again = await pg.exportJournal();
    await pg.closeAsync();

    const back = tempDir();
    const restored = openSqliteStore({ dir: back.dir, clock });
    await restored.importJournal(again);
    expect(await restored.exportJournal()).toEqual(again);
    restored.close();
    dir.cleanup();
    back.cleanup();
  });

  it('refuses an intent named twice and writes nothing', async () => {
    const url = await server().freshDatabase();
    const store = await openPgStore({ url, schema: 'twice', clock: new FakeClock() });
    store.recordIntents([eventIntent(1)]);
    await store.sync();
    const journal = await store.exportJournal();
    await store.closeAsync();
    const other = await openPgStore({ url, schema: 'other', clock: new FakeClock() });
    const twice = { ...journal, intents: [...journal.intents, ...journal.intents] };
    await expect(other.importJournal(twice)).rejects.toMatchObject({
      code: 'STORE_BAD_ARGUMENT',
    });
    expect(await other.exportJournal()).toEqual({ intents: [], slots: [] });
    await other.closeAsync();
  });
});
