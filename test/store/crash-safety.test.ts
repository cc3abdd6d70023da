import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { tempDir } from '../support/temp-dir.js';
import { expectConsistentJournal, runAndKill } from './crash-run.js';

let dir: string;
let cleanup: () => void;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

function checkInvariants(): { checkpoint: number; events: number } {
  const db = new Database(join(dir, SQLITE_STORE_FILE));
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
  const store = openSqliteStore({ dir });
  try {
    return expectConsistentJournal({
      checkpoint: store.checkpoint(),
      intents: store.listIntents({ limit: 1_000_000 }),
      deadLetters: store.listDeadLetters({ limit: 1_000_000 }).length,
      open: store.openIntents(),
    });
  } finally {
    store.close();
  }
}

/** Rows in the journal's log that no fold has taken in yet. */
function unfoldedLogRows(): number {
  const db = new Database(join(dir, SQLITE_STORE_FILE), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM intent_log').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

it('a process SIGKILLed in the middle of batches leaves a consistent store, twice over', async () => {
  // A short log: the kills land among appends and folds.
  await runAndKill(dir, 50, 150, 40);
  const first = checkInvariants();
  expect(first.events).toBeGreaterThanOrEqual(50);
  expect(first.checkpoint).toBeGreaterThan(0);
  // The restarted writer continues on the same file (re-recording is idempotent), and is killed again.
  await runAndKill(dir, first.events + 20, 100, 40);
  const second = checkInvariants();
  expect(second.events).toBeGreaterThanOrEqual(first.events + 20);
});

it('a process SIGKILLed between log writes and a fold leaves a consistent store, replayed from the log', async () => {
  // No fold while it runs: everything it committed is in the log when it dies.
  await runAndKill(dir, 60, 100, 1_000_000_000);
  expect(unfoldedLogRows()).toBeGreaterThan(60 * 3);
  const first = checkInvariants();
  expect(first.events).toBeGreaterThanOrEqual(60);
  // The reopen folded the log.
  expect(unfoldedLogRows()).toBe(0);
  await runAndKill(dir, first.events + 20, 100, 1_000_000_000);
  const second = checkInvariants();
  expect(second.events).toBeGreaterThanOrEqual(first.events + 20);
});

it('a process SIGKILLed while its WAL checkpoints run on their own thread leaves a consistent store', async () => {
  await runAndKill(dir, 200, 300, 40, true);
  const first = checkInvariants();
  expect(first.events).toBeGreaterThanOrEqual(200);
  await runAndKill(dir, first.events + 100, 200, 40, true);
  const second = checkInvariants();
  expect(second.events).toBeGreaterThanOrEqual(first.events + 100);
});
