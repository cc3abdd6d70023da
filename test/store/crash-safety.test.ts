import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { isTerminal } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

let dir: string;
let cleanup: () => void;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

/** Starts the child, waits until it has written `readyAfter` batches, lets it run on, kills it. */
async function runAndKill(
  readyAfter: number,
  extraMs: number,
  foldAfterLogRows: number,
): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, 'crash-child.ts'),
      dir,
      String(readyAfter),
      String(foldAfterLogRows),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child not ready: ${stderr}`)), 15_000);
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited early (${code}): ${stderr}`));
    });
  });
  await new Promise((r) => setTimeout(r, extraMs));
  expect(child.kill('SIGKILL')).toBe(true);
  await exited;
  expect(child.signalCode).toBe('SIGKILL');
}

function checkInvariants(): { checkpoint: number; events: number } {
  const db = new Database(join(dir, SQLITE_STORE_FILE));
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
  const store = openSqliteStore({ dir });
  try {
    const checkpoint = store.checkpoint();
    expect(checkpoint).toBeDefined();
    const all = store.listIntents({ limit: 1_000_000 });
    const byOffset = new Map<number, typeof all>();
    for (const i of all) byOffset.set(i.offset, [...(byOffset.get(i.offset) ?? []), i]);
    // A batch is all or nothing: every event has its 3 intents.
    for (const intents of byOffset.values()) expect(intents).toHaveLength(3);
    // The low-watermark: nothing at or below the checkpoint is still open.
    for (const i of all) if (i.offset <= checkpoint!) expect(isTerminal(i.state)).toBe(true);
    // ... and it is as far as it can be: the next event is open or not processed yet.
    const next = byOffset.get(checkpoint! + 1);
    if (next !== undefined) expect(next.some((i) => !isTerminal(i.state))).toBe(true);
    // Dead letters and intents agree.
    const deadLettered = all.filter((i) => i.state === 'dead-lettered').length;
    expect(store.listDeadLetters({ limit: 1_000_000 })).toHaveLength(deadLettered);
    // Open intents come back with what a resubmission needs.
    for (const i of store.openIntents())
      expect(i.payload).toMatchObject({ commandId: i.commandId });
    return { checkpoint: checkpoint!, events: byOffset.size };
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
  await runAndKill(50, 150, 40);
  const first = checkInvariants();
  expect(first.events).toBeGreaterThanOrEqual(50);
  expect(first.checkpoint).toBeGreaterThan(0);
  // The restarted writer continues on the same file (re-recording is idempotent), and is killed again.
  await runAndKill(first.events + 20, 100, 40);
  const second = checkInvariants();
  expect(second.events).toBeGreaterThanOrEqual(first.events + 20);
});

it('a process SIGKILLed between log writes and a fold leaves a consistent store, replayed from the log', async () => {
  // No fold while it runs: everything it committed is in the log when it dies.
  await runAndKill(60, 100, 1_000_000_000);
  expect(unfoldedLogRows()).toBeGreaterThan(60 * 3);
  const first = checkInvariants();
  expect(first.events).toBeGreaterThanOrEqual(60);
  // The reopen folded the log.
  expect(unfoldedLogRows()).toBe(0);
  await runAndKill(first.events + 20, 100, 1_000_000_000);
  const second = checkInvariants();
  expect(second.events).toBeGreaterThanOrEqual(first.events + 20);
});
