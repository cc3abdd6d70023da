import { join } from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope } from '../support/test-scope.js';
import { spawnBot, writeBotConfig } from './child-bot.js';
import { startTestLedger } from './harness.js';
import { killAndRestartMidStream } from './kill-restart.js';

// child-process.test.ts's kill and restart with the journal in PostgreSQL: a bot SIGKILLed while
// it works restarts from what it committed, and loses nothing and duplicates nothing.

describeWithPg('ledgerbot run on PostgreSQL, SIGKILLed', (server) => {
  it(
    'SIGKILL at seeded random points mid-stream, restart: every effect exactly once',
    () =>
      withScope(async (scope) => {
        const url = await server().freshDatabase();
        const ledger = scope.own(await startTestLedger(3002));
        const temp = scope.tempDir('ledgerbot-kill-pg-');
        const config = writeBotConfig(ledger, temp, {
          stateDir: join(temp, 'state'),
          postgres: { url, schema: 'killed' },
        });
        const db = new pg.Client({ connectionString: url });
        db.on('error', () => undefined);
        await db.connect();
        scope.defer(db, () => db.end());
        const count = async (states: readonly string[]): Promise<number> =>
          Number(
            (
              await db.query<{ n: string }>(
                'SELECT count(*) AS n FROM killed.lb_intents WHERE state = ANY($1::text[])',
                [states],
              )
            ).rows[0]!.n,
          );

        await killAndRestartMidStream({
          ledger,
          seed: 3002,
          start: () => {
            const bot = spawnBot(config, { fromSources: true });
            return scope.defer(bot, () => bot.kill('SIGKILL'));
          },
          openIntents: () => count(['pending', 'submitted']),
        });
        expect(await count(['pending', 'submitted'])).toBe(0);
        expect(await count(['dead-lettered', 'rejected'])).toBe(0);
        expect(await count(['succeeded', 'duplicate'])).toBeGreaterThan(0);
      }),
    180_000,
  );
});
