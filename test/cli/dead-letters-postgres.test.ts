import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openPgStore } from '../../src/store/pg/open-pg-store.js';
import { cli } from '../support/cli-capture.js';
import { describeWithPg } from '../support/describe-with-pg.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from '../store/store-fixtures.js';

// `ledgerbot dead-letters` and `schedule` on a config whose journal is in PostgreSQL, with no bot
// running (no http section): they read the schema, and retry and drop write it under its lock.

const PASSWORD = 'cli-pw-hidden';

describeWithPg('ledgerbot dead-letters on PostgreSQL', (server) => {
  let url: string;
  let config: string;
  let cleanup: () => void;
  beforeAll(async () => {
    const u = new URL(await server().freshDatabase());
    u.password = PASSWORD;
    url = u.toString();
    const store = await openPgStore({ url, schema: 'cli', clock: new FakeClock() });
    store.recordIntents([eventIntent(1), eventIntent(2), eventIntent(3)]);
    store.transition('lb-rule-1-0', { to: 'dead-lettered', error: { code: 'ONE' } });
    store.transition('lb-rule-2-0', { to: 'dead-lettered', error: { code: 'TWO' } });
    await store.closeAsync();
    let dir: string;
    ({ dir, cleanup } = tempDir());
    config = join(dir, 'bot.config.yaml');
    writeFileSync(
      config,
      [
        'ledger: { url: "http://127.0.0.1:1", userId: bot }',
        'rules: rules/',
        'state:',
        `  dir: ${join(dir, 'state')}`,
        `  postgres: { url: "${url}", schema: cli }`,
        '',
      ].join('\n'),
    );
  }, 120_000);
  afterAll(() => {
    cleanup?.();
  });

  async function stateOf(id: string): Promise<string | undefined> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query<{ state: string }>(
        'SELECT state FROM cli.lb_intents WHERE command_id = $1',
        [id],
      );
      return rows[0]?.state;
    } finally {
      await c.end();
    }
  }

  it('lists and shows the dead letters of the schema, naming it with the password masked', async () => {
    const r = await cli(['dead-letters', 'list', '--config', config]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('2 dead letter(s)');
    expect(r.out).toContain('lb-rule-1-0');
    expect(r.out).toContain('(schema cli)');
    expect(r.out).not.toContain(PASSWORD);
    const show = await cli(['dead-letters', 'show', 'lb-rule-2-0', '--config', config]);
    expect(show.code).toBe(0);
    expect(show.out).toContain('TWO');
  });

  it('retries and drops in the schema, and is refused while a bot holds it', async () => {
    const held = await openPgStore({ url, schema: 'cli', exclusive: true });
    const locked = await cli(['dead-letters', 'retry', 'lb-rule-1-0', '--config', config]);
    await held.closeAsync();
    expect(locked.code).toBe(1);
    expect(locked.err).toContain('is in use by a running ledgerbot');
    expect(locked.err).toContain(':***@127.0.0.1');
    expect(locked.err).not.toContain(PASSWORD);
    expect(await stateOf('lb-rule-1-0')).toBe('dead-lettered');

    const retry = await cli(['dead-letters', 'retry', 'lb-rule-1-0', '--config', config]);
    expect(retry.code).toBe(0);
    expect(await stateOf('lb-rule-1-0')).toBe('pending');
    const drop = await cli(['dead-letters', 'drop', 'lb-rule-2-0', '--config', config]);
    expect(drop.code).toBe(0);
    expect(await stateOf('lb-rule-2-0')).toBeUndefined();
    const list = await cli(['dead-letters', 'list', '--config', config, '--json']);
    expect(JSON.parse(list.out)).toEqual([]);
  });

  it('a schema no bot has run with is no store (exit 1, named)', async () => {
    const other = config.replace('bot.config.yaml', 'other.config.yaml');
    writeFileSync(
      other,
      [
        'ledger: { url: "http://127.0.0.1:1", userId: bot }',
        'rules: rules/',
        `state: { postgres: { url: "${url}", schema: nobody_here } }`,
        '',
      ].join('\n'),
    );
    const r = await cli(['dead-letters', 'list', '--config', other]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('there is no ledgerbot journal in the PostgreSQL state store at');
    expect(r.err).toContain('(schema nobody_here)');
    expect(r.err).not.toContain(PASSWORD);
  });
});
