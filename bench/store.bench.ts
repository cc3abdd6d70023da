// The store's cost per intent lifecycle: `npx vitest bench bench/store.bench.ts`.
// 10,000 intents through pending → submitted → succeeded in batches of 100: one commit per batch,
// and, as the bot runs it, with group commit, recording and first submission in one commit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bench, describe } from 'vitest';
import { openSqliteStore } from '../src/store/open-sqlite-store.js';
import type { NewIntent } from '../src/store/store.js';

const INTENTS = 10_000;
const BATCH = 100;

function intent(offset: number, n: number): NewIntent {
  const commandId = `lb-bench-${offset}-${n}`;
  return {
    commandId,
    userId: 'ledgerbot',
    actAs: ['Payer::1220bb'],
    ruleId: 'bench',
    revision: 1,
    actionIndex: n,
    trigger: { kind: 'event', updateId: `upd-${offset}`, nodeId: n },
    offset,
    payload: {
      commandId,
      commands: [
        {
          ExerciseCommand: {
            templateId: '#invoices:Invoice:Invoice',
            contractId: `00${'ab'.repeat(33)}`,
            choice: 'Accept',
            choiceArgument: {},
          },
        },
      ],
    },
  };
}

function lifecycle(synchronous: 'normal' | 'full', grouped = false): void {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-bench-'));
  // A window no batch reaches: `flush` commits, where the bot's turn would end.
  const store = openSqliteStore({
    dir,
    synchronous,
    ...(grouped ? { groupCommit: { windowMs: 3_600_000 } } : {}),
  });
  try {
    for (let start = 0; start < INTENTS; start += BATCH) {
      const ids: string[] = [];
      // One event per 4 intents, like a transaction producing several actions.
      store.batch(() => {
        const intents = Array.from({ length: BATCH }, (_, i) =>
          intent(1 + Math.floor((start + i) / 4), (start + i) % 4),
        );
        store.recordIntents(intents);
        store.advanceCheckpoint(1 + Math.floor((start + BATCH - 1) / 4));
        ids.push(...intents.map((i) => i.commandId));
      });
      store.batch(() => {
        for (const id of ids) store.transition(id, { to: 'submitted', submissionId: id });
      });
      if (grouped) store.flush();
      store.batch(() => {
        for (const id of ids) store.transition(id, { to: 'succeeded', completionOffset: start });
      });
      if (grouped) store.flush();
    }
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe(`${INTENTS} intents through their lifecycle in batches of ${BATCH}`, () => {
  bench('synchronous=NORMAL (default)', () => lifecycle('normal'), { iterations: 3 });
  bench('synchronous=FULL', () => lifecycle('full'), { iterations: 3 });
  bench('group commit: recording and submission in one commit', () => lifecycle('normal', true), {
    iterations: 3,
  });
});
