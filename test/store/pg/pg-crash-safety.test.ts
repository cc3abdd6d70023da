import { expect, it } from 'vitest';
import { openPgStore } from '../../../src/store/pg/open-pg-store.js';
import { describeWithPg } from '../../support/describe-with-pg.js';
import { expectConsistentJournal, runAndKill } from '../crash-run.js';

// crash-safety.test.ts for the PostgreSQL store: a writer SIGKILLed among its group commits
// restarts from the checkpoint it committed, loses no event and records none twice.

describeWithPg('the PostgreSQL store, SIGKILLed', (server) => {
  async function checkInvariants(url: string): Promise<{ checkpoint: number; events: number }> {
    const store = await openPgStore({ url });
    try {
      // The database's rows, every one of them (memory holds only what the hot path needs).
      const queries = store.queries();
      return expectConsistentJournal({
        checkpoint: store.checkpoint(),
        intents: await queries.listIntents({ limit: 1_000_000 }),
        deadLetters: (await queries.listDeadLetters({ limit: 1_000_000 })).length,
        open: store.openIntents(),
      });
    } finally {
      await store.closeAsync();
    }
  }

  it('a writer SIGKILLed in the middle of group commits leaves a consistent journal, twice over', async () => {
    const url = await server().freshDatabase();
    await runAndKill(url, 50, 150);
    const first = await checkInvariants(url);
    expect(first.events).toBeGreaterThanOrEqual(50);
    expect(first.checkpoint).toBeGreaterThan(0);
    // The restarted writer resumes from the committed checkpoint (re-recording is idempotent).
    await runAndKill(url, first.events + 20, 100);
    const second = await checkInvariants(url);
    expect(second.events).toBeGreaterThanOrEqual(first.events + 20);
    expect(second.checkpoint).toBeGreaterThanOrEqual(first.checkpoint);
    console.log(`pg crash: ${JSON.stringify({ first, second })}`);
  }, 90_000);
});
