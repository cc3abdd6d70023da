import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { isTerminal, type IntentRecord } from '../../src/store/store.js';

// The crash tests' shared pieces (crash-safety.test.ts for SQLite, pg/pg-crash-safety.test.ts
// for PostgreSQL): crash-child.ts writes batches to a store until it is SIGKILLed, and what the
// journal holds after is checked the same way for both stores.

/**
 * Starts crash-child.ts on `target` (a directory: the SQLite store; a postgres:// URL: the
 * PostgreSQL store), waits until it has committed `readyAfter` batches, lets it run on, kills it.
 */
export async function runAndKill(
  target: string,
  readyAfter: number,
  extraMs: number,
  foldAfterLogRows = 1_000_000_000,
  checkpointThread = false,
): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, 'crash-child.ts'),
      target,
      String(readyAfter),
      String(foldAfterLogRows),
      ...(checkpointThread ? ['thread'] : []),
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

/** What a reopened store says of its journal. */
export type JournalView = {
  readonly checkpoint: number | undefined;
  /** Every intent in the journal. */
  readonly intents: readonly IntentRecord[];
  readonly deadLetters: number;
  readonly open: readonly IntentRecord[];
};

/** The crash child's journal is consistent: nothing lost, nothing twice, nothing half-written. */
export function expectConsistentJournal(view: JournalView): { checkpoint: number; events: number } {
  const checkpoint = view.checkpoint;
  expect(checkpoint).toBeDefined();
  const byOffset = new Map<number, IntentRecord[]>();
  for (const i of view.intents) byOffset.set(i.offset, [...(byOffset.get(i.offset) ?? []), i]);
  // A batch is all or nothing: every event has its 3 intents, once each.
  for (const intents of byOffset.values()) {
    expect(intents).toHaveLength(3);
    expect(new Set(intents.map((i) => i.commandId)).size).toBe(3);
  }
  // Nothing lost: the events are 1..n, none missing.
  const offsets = [...byOffset.keys()].sort((a, b) => a - b);
  expect(offsets).toEqual(offsets.map((_, n) => n + 1));
  // The low-watermark: nothing at or below the checkpoint is still open.
  for (const i of view.intents) if (i.offset <= checkpoint!) expect(isTerminal(i.state)).toBe(true);
  // ... and it is as far as it can be: the next event is open or not processed yet.
  const next = byOffset.get(checkpoint! + 1);
  if (next !== undefined) expect(next.some((i) => !isTerminal(i.state))).toBe(true);
  // Dead letters and intents agree.
  const deadLettered = view.intents.filter((i) => i.state === 'dead-lettered').length;
  expect(view.deadLetters).toBe(deadLettered);
  // Open intents come back with what a resubmission needs.
  for (const i of view.open) expect(i.payload).toMatchObject({ commandId: i.commandId });
  return { checkpoint: checkpoint!, events: byOffset.size };
}
