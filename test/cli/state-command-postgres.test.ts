import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { cli } from '../support/cli-capture.js';
import { describeWithPg } from '../support/describe-with-pg.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { eventIntent } from '../store/store-fixtures.js';

// `ledgerbot state export|import` with a config whose journal is in PostgreSQL: a SQLite
// journal moves into the schema and comes back out the same.

describeWithPg('ledgerbot state on PostgreSQL', (server) => {
  let tmp: TempDir;
  beforeAll(() => {
    tmp = tempDir();
  });
  afterAll(() => tmp?.cleanup());

  it('moves a SQLite journal into an empty schema, refuses a second import, exports it the same', async () => {
    const dir = join(tmp.dir, 'sqlite');
    const store = openSqliteStore({ dir, clock: new FakeClock() });
    store.recordIntents([eventIntent(3), eventIntent(4, 0, { event: { e: 4 } })]);
    store.transition('lb-rule-3-0', { to: 'dead-lettered', error: { code: 'X' } });
    store.advanceCheckpoint(9);
    store.close();
    const fromSqlite = join(tmp.dir, 'a.jsonl');
    expect((await cli(['state', 'export', '--state-dir', dir, '--out', fromSqlite])).code).toBe(0);

    const config = join(tmp.dir, 'bot.config.yaml');
    writeFileSync(
      config,
      `ledger: { url: "http://127.0.0.1:1", userId: bot }\nrules: rules/\nstate:\n  dir: ${join(tmp.dir, 'caches')}\n  postgres: { url: "${await server().freshDatabase()}", schema: moved }\n`,
    );
    const imported = await cli(['state', 'import', '--config', config, '--in', fromSqlite]);
    expect(imported.err).toBe('');
    expect(imported.code).toBe(0);
    expect(imported.out).toContain('imported 2 intent(s) and 0 slot record(s) into postgres://');
    expect(imported.out).toContain('(schema moved) (checkpoint 3)');
    const again = await cli(['state', 'import', '--config', config, '--in', fromSqlite]);
    expect(again.code).toBe(2);
    expect(again.err).toContain('STORE_NOT_EMPTY');

    const fromPg = join(tmp.dir, 'b.jsonl');
    const exported = await cli(['state', 'export', '--config', config, '--out', fromPg]);
    expect(exported.code).toBe(0);
    const body = (file: string): string[] => readFileSync(file, 'utf8').split('\n').slice(1);
    expect(body(fromPg)).toEqual(body(fromSqlite));
  });
});
