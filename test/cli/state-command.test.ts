import {
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { JOURNAL_LINE_LIMITS } from '../../src/store/journal-lines.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { cli } from '../support/cli-capture.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';
import { eventIntent } from '../store/store-fixtures.js';

let temp: TempDir;
let source: string;
let exported: string;
let n = 0;

/** A fresh path under the temp dir. */
function fresh(name: string): string {
  n += 1;
  return join(temp.dir, `${name}-${n}`);
}

/**
 * A journal with every state, a dead letter retried by an operator and dead-lettered again,
 * retries and an attempt in doubt, schedule and contract triggers, slot records, and a
 * checkpoint held below the processed offset by an open intent.
 */
function buildJournal(store: Store, clock: FakeClock): void {
  const error = { code: 'SOME_REJECTION', message: 'no' };
  store.recordIntents([
    eventIntent(10, 0, { event: { offset: 10, created: { argument: { amount: '1.0' } } } }),
    eventIntent(10, 1),
    eventIntent(11),
    eventIntent(12),
    eventIntent(13, 0, { deadline: Date.UTC(2026, 0, 2) }),
    eventIntent(14),
    eventIntent(15),
    eventIntent(16, 0, {
      trigger: { kind: 'slot', slot: Date.UTC(2026, 0, 1, 6), contractId: null },
      ruleId: 'nightly',
    }),
    eventIntent(17, 0, { trigger: { kind: 'contract', contractId: '00ab', nodeId: 2 } }),
  ]);
  const t = (id: string, change: Parameters<Store['transition']>[1]): void => {
    store.transition(id, change);
  };
  clock.set(clock.now() + 1_000);
  t('lb-rule-10-0', { to: 'submitted', submissionId: 's-10-0' });
  t('lb-rule-10-0', { to: 'succeeded', completionOffset: 20, updateId: 'upd-20' });
  t('lb-rule-10-1', { to: 'submitted', submissionId: 's-10-1' });
  t('lb-rule-10-1', { to: 'duplicate' });
  t('lb-rule-11-0', { to: 'submitted', submissionId: 's-11-a' });
  t('lb-rule-11-0', { to: 'pending', nextAttemptAt: clock.now() + 500, error, definite: true });
  t('lb-rule-11-0', { to: 'submitted', submissionId: 's-11-b' });
  t('lb-rule-11-0', { to: 'rejected', error, completionOffset: 21 });
  t('lb-rule-12-0', { to: 'submitted', submissionId: 's-12' });
  t('lb-rule-12-0', { to: 'dead-lettered', error, event: { why: 'deadline' } });
  store.requeueDeadLetter('lb-rule-12-0', { deadline: clock.now() + 60_000 });
  clock.set(clock.now() + 1_000);
  t('lb-rule-12-0', { to: 'submitted', submissionId: 's-12-retry' });
  t('lb-rule-12-0', { to: 'dead-lettered', error: { code: 'AGAIN', message: 'still no' } });
  t('lb-rule-13-0', { to: 'submitted', submissionId: 's-13' });
  t('lb-rule-13-0', { to: 'pending', nextAttemptAt: clock.now() + 2_000 }); // in doubt
  t('lb-rule-14-0', { to: 'submitted', submissionId: 's-14' });
  t('lb-rule-16-0', { to: 'submitted', submissionId: 's-16' });
  t('lb-rule-16-0', { to: 'succeeded' });
  store.advanceCheckpoint(30);
  store.beginSlot('nightly', Date.UTC(2026, 0, 1, 6), 16);
  store.completeSlot('nightly', Date.UTC(2026, 0, 1, 6));
  store.beginSlot('hourly', Date.UTC(2026, 0, 1, 7), 18);
}

/** An intent line, as a test edits it. */
type Line = { intent: Record<string, unknown>; [key: string]: unknown };

/** The lines of an export but the header's time. */
function body(text: string): string[] {
  const [header, ...rest] = text.split('\n');
  const h = JSON.parse(header!) as Record<string, unknown>;
  delete h.exportedAt;
  return [JSON.stringify(h), ...rest];
}

beforeAll(async () => {
  temp = tempDir('ledgerbot-state-cli-');
  source = fresh('source');
  const clock = new FakeClock();
  // Exported while this writer keeps it open, as a running bot would (part of it unfolded).
  const store = openSqliteStore({ dir: source, clock, exclusive: true });
  buildJournal(store, clock);
  exported = fresh('export.jsonl');
  const r = await cli(['state', 'export', '--state-dir', source, '--out', exported]);
  store.close();
  expect(r).toMatchObject({ code: 0, err: '' });
  expect(r.out).toMatch(/^exported 9 intent\(s\) and 2 slot record\(s\) from .* to .*export/);
  // Only its owner reads it: it holds the business of the bot's parties.
  expect(statSync(exported).mode & 0o777).toBe(0o600);
});

afterAll(() => temp.cleanup());

describe('ledgerbot state export / import', () => {
  it('round-trips the whole journal exactly: export, import into a fresh dir, export again', async () => {
    const target = fresh('target');
    const imported = await cli(['state', 'import', '--state-dir', target, '--in', exported]);
    expect(imported).toMatchObject({ code: 0, err: '' });
    expect(imported.out).toMatch(/imported 9 intent\(s\) and 2 slot record\(s\) .*checkpoint 12/);
    const again = await cli(['state', 'export', '--state-dir', target]);
    expect(again.code).toBe(0);
    expect(again.err).toMatch(/^exported 9 intent/);
    const first = readFileSync(exported, 'utf8');
    expect(body(again.out)).toEqual(body(first));

    const lines = first.trimEnd().split('\n');
    const header = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(header).toMatchObject({
      format: 'ledgerbot-journal',
      version: 1,
      checkpoint: 12,
      processedOffset: 30,
      intents: 9,
      slots: 2,
    });
    // Every state, attempts and dead-letter facts are in the file, not just in the store.
    const states = lines
      .slice(1, 10)
      .map((l) => (JSON.parse(l) as { intent: { state: string } }).intent.state);
    expect(new Set(states)).toEqual(
      new Set(['succeeded', 'duplicate', 'rejected', 'dead-lettered', 'pending', 'submitted']),
    );

    // The imported store reads as the source did.
    const a = openSqliteStore({ dir: source, readonly: true });
    const b = openSqliteStore({ dir: target, readonly: true });
    try {
      expect(b.checkpoint()).toBe(12);
      expect(b.listIntents({ limit: -1 })).toEqual(a.listIntents({ limit: -1 }));
      expect(b.openIntents()).toEqual(a.openIntents());
      expect(b.getAttempts('lb-rule-12-0')).toEqual(a.getAttempts('lb-rule-12-0'));
      expect(b.getAttempts('lb-rule-12-0')).toHaveLength(2);
      expect(b.getDeadLetter('lb-rule-12-0')).toEqual(a.getDeadLetter('lb-rule-12-0'));
      expect(b.getRecordedEvent('lb-rule-10-0')).toEqual(a.getRecordedEvent('lb-rule-10-0'));
      expect(b.getIntent('lb-rule-13-0')?.inDoubt).toBe(true);
      expect(b.listSlotRecords()).toEqual(a.listSlotRecords());
      expect(b.countByState()).toEqual(a.countByState());
    } finally {
      a.close();
      b.close();
    }
  });

  it('refuses to import into a state directory that holds a journal, and leaves it as it was', async () => {
    const before = readFileSync(join(source, SQLITE_STORE_FILE));
    const r = await cli(['state', 'import', '--state-dir', source, '--in', exported]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/already holds a journal \(9 intent\(s\)\).*\[STORE_NOT_EMPTY\]/);
    expect(readFileSync(join(source, SQLITE_STORE_FILE))).toEqual(before);
  });

  it('imports into an existing store that is still empty', async () => {
    const target = fresh('empty');
    openSqliteStore({ dir: target }).close();
    const r = await cli(['state', 'import', '--state-dir', target, '--in', exported]);
    expect(r.code).toBe(0);
  });

  const lines = (): string[] => readFileSync(exported, 'utf8').split('\n').slice(0, -1);
  const withLines = (ls: string[]): string => `${ls.join('\n')}\n`;

  /** Imports `text` into a fresh dir: exit 2, the message, and no store made. */
  async function refused(text: string | Buffer, message: RegExp): Promise<void> {
    const file = fresh('bad.jsonl');
    writeFileSync(file, text);
    const target = fresh('target');
    const r = await cli(['state', 'import', '--state-dir', target, '--in', file]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).toContain(file);
    expect(existsSync(join(target, SQLITE_STORE_FILE))).toBe(false);
  }

  it('refuses a file that is not an export, naming the file and line', async () => {
    await refused('{"hello":"world"}\n', /bad\.jsonl-\d+:1: not a ledgerbot-journal export/);
    await refused('not json at all\n', /:1: not a JSON line/);
    await refused('', /the file is empty, not a ledgerbot-journal/);
  });

  it('refuses another version of the format', async () => {
    const [header, ...rest] = lines();
    const v2 = header!.replace('"version":1', '"version":2');
    await refused(
      withLines([v2, ...rest]),
      /:1: version 2 of ledgerbot-journal, but this ledgerbot reads version 1/,
    );
  });

  it('refuses a truncated file: a cut line, or lines missing at the end', async () => {
    const text = withLines(lines());
    await refused(text.slice(0, -20), /:12: the last line has no newline: the file is truncated/);
    await refused(
      withLines(lines().slice(0, -1)),
      /promises 9 intents and 2 slot records, the file has 9 and 1/,
    );
    const cut = withLines(lines().slice(0, 4));
    await refused(cut, /promises 9 intents .* the file has 3 and 0: it is truncated/);
  });

  it('refuses a line that is not an intent or slot, or an intent that does not check', async () => {
    const [header, ...rest] = lines();
    await refused(
      withLines([header!, '{"kind":"banana"}', ...rest]),
      /:2: not an intent or slot line/,
    );
    await refused(withLines([header!, '[1,2]', ...rest]), /:2: not an intent or slot line/);
    const bad = (edit: (row: Line) => void): string => {
      const row = JSON.parse(rest[0]!) as Line;
      edit(row);
      return withLines([header!, JSON.stringify(row), ...rest.slice(1)]);
    };
    await refused(
      bad((r) => (r.intent.state = 'flying')),
      /:2: intent lb-rule-10-0: state must be one of/,
    );
    await refused(
      bad((r) => delete r.intent.payload),
      /:2: intent lb-rule-10-0: payload is missing/,
    );
    await refused(
      bad((r) => (r.intent.offset = -1)),
      /:2: intent lb-rule-10-0: offset must be a non-negative/,
    );
    await refused(
      bad((r) => (r.intent.extra = 1)),
      /:2: intent has an unknown field "extra"/,
    );
    await refused(
      bad((r) => (r.deadLetter = { error: 1, deadLetteredAt: 1 })),
      /:2: .*deadLetter is set, but the intent is succeeded/,
    );
    await refused(
      bad((r) => (r.attemptLog = [{ n: 1 }])),
      /:2: intent lb-rule-10-0: attemptLog\[0\]\.outcome must be/,
    );
    await refused(
      bad((r) => (r.intent.trigger = { kind: 'x' })),
      /:2: intent lb-rule-10-0: trigger\.kind must be/,
    );
    await refused(
      withLines([header!, rest[0]!, ...rest]),
      /:3: intent lb-rule-10-0 again \(first on line 2\)/,
    );
    await refused(
      withLines([header!, ...rest.slice(-1), ...rest.slice(0, -1)]),
      /:3: an intent after the slot records/,
    );
  });

  it('refuses a huge line, a huge file and deeply nested JSON', async () => {
    const [header, first, ...rest] = lines();
    const row = JSON.parse(first!) as Line;
    row.intent.payload = { big: 'x'.repeat(JOURNAL_LINE_LIMITS.maxLineBytes) };
    await refused(
      withLines([header!, JSON.stringify(row), ...rest]),
      /:2: the line is longer than 16777216 bytes/,
    );

    // Built as text: JSON.stringify itself cannot nest this deep.
    row.intent.payload = 'NESTED';
    const nested = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    const deep = JSON.stringify(row).replace('"NESTED"', nested);
    await refused(withLines([header!, deep, ...rest]), /:2: the line nests deeper than 256 levels/);

    // A sparse file: its size is refused before a byte of it is read.
    const file = fresh('huge.jsonl');
    writeFileSync(file, '');
    truncateSync(file, JOURNAL_LINE_LIMITS.maxFileBytes + 1);
    const target = fresh('target');
    const r = await cli(['state', 'import', '--state-dir', target, '--in', file]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/huge\.jsonl-\d+: the file has 1073741825 bytes, more than 1073741824/);
    expect(existsSync(target)).toBe(false);
  });

  it('refuses bad usage with exit 2', async () => {
    const both = await cli(['state', 'export', '--config', 'x.yaml', '--state-dir', source]);
    expect(both).toMatchObject({
      code: 2,
      err: 'ledgerbot: state takes --config or --state-dir, not both\n',
    });
    const noIn = await cli(['state', 'import', '--state-dir', fresh('t')]);
    expect(noIn.code).toBe(2);
    expect(noIn.err).toMatch(/state import needs --in FILE/);
    expect((await cli(['state', 'copy'])).err).toMatch(/state needs export or import, not "copy"/);
    expect((await cli(['state', 'export', '--state-dir', source, '--in', exported])).code).toBe(2);
    const missing = await cli([
      'state',
      'import',
      '--state-dir',
      fresh('t'),
      '--in',
      fresh('nope'),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read .*nope/);
  });

  it('with state.postgres works on the database, not state.dir: one that cannot be reached exits 1, its password masked', async () => {
    const config = fresh('pg.config.yaml');
    writeFileSync(
      config,
      `ledger:\n  url: http://127.0.0.1:7575\n  userId: bot\nrules: rules/\nstate:\n  dir: ${source}\n  postgres: { url: 'postgres://bot:pw-hidden@127.0.0.1:1/db' }\n`,
    );
    for (const args of [['export'], ['import', '--in', exported]]) {
      const r = await cli(['state', ...args, '--config', config]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(
        'cannot open the PostgreSQL state store at postgres://bot:***@127.0.0.1:1/db (schema ledgerbot)',
      );
      expect(r.err).not.toContain('pw-hidden');
      expect(r.out).toBe('');
    }
  });

  it('refuses to export an intent its import would refuse, writing nothing', async () => {
    const dir = fresh('deep');
    let payload: unknown = 1;
    for (let i = 0; i < 300; i++) payload = { a: payload };
    const store = openSqliteStore({ dir, clock: new FakeClock() });
    store.recordIntents([eventIntent(1, 0, { payload })]);
    store.close();
    const why =
      /intent lb-rule-1-0 cannot be exported: its line would be deeper than 256 levels, which an import refuses \[JOURNAL_BAD_FORMAT\]/;
    const toStdout = await cli(['state', 'export', '--state-dir', dir]);
    expect(toStdout).toMatchObject({ code: 2, out: '' });
    expect(toStdout.err).toMatch(why);
    const file = fresh('deep.jsonl');
    const toFile = await cli(['state', 'export', '--state-dir', dir, '--out', file]);
    expect(toFile.code).toBe(2);
    expect(toFile.err).toMatch(why);
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(temp.dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('says when there is no store to export', async () => {
    const r = await cli(['state', 'export', '--state-dir', fresh('none')]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/there is no state store in .*none-\d+ to export \[STORE_OPEN_FAILED\]/);
  });
});
