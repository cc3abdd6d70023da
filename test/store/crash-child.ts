// Run by crash-run.ts: writes batches to a store until it is killed (or a bound is hit). The
// target is a directory (the SQLite store) or a postgres:// URL (the PostgreSQL store).
import { FOLD_AFTER_LOG_ROWS } from '../../src/store/journal-file.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { openPgStore } from '../../src/store/pg/open-pg-store.js';
import { INTENT_TRANSITIONS, type IntentChange, type Store } from '../../src/store/store.js';
import { eventIntent } from './store-fixtures.js';

const target = process.argv[2]!;
const readyAfter = Number(process.argv[3] ?? 50);
// How long the journal's log may grow before a commit folds it (SQLite).
const foldAfterLogRows = Number(process.argv[4] ?? FOLD_AFTER_LOG_ROWS);
// 'thread': the WAL checkpoints on their own thread, as the bot runs them (SQLite).
const checkpointThread = process.argv[5] === 'thread';
const pg = target.startsWith('postgres');
const store: Store = pg
  ? await openPgStore({ url: target })
  : openSqliteStore({ dir: target, foldAfterLogRows, checkpointThread });
const started = Date.now();

// Like the runtime after a restart: replayed events find their intents already recorded, and
// only moves the state machine allows are made.
function move(commandId: string, change: IntentChange): void {
  const state = store.getIntent(commandId)?.state;
  if (state !== undefined && INTENT_TRANSITIONS[state].includes(change.to)) {
    store.transition(commandId, change);
  }
}

for (
  let offset = (store.checkpoint() ?? 0) + 1;
  offset < 1_000_000 && Date.now() - started < 20_000;
  offset++
) {
  store.batch(() => {
    store.recordIntents([eventIntent(offset, 0), eventIntent(offset, 1), eventIntent(offset, 2)]);
    store.advanceCheckpoint(offset);
  });
  store.batch(() => {
    if (offset > 2) {
      for (let n = 0; n < 3; n++) {
        move(`lb-rule-${offset - 2}-${n}`, { to: 'submitted', submissionId: `s${offset}` });
      }
    }
    if (offset > 4) {
      const o = offset - 4;
      move(`lb-rule-${o}-0`, { to: 'succeeded', completionOffset: offset });
      move(`lb-rule-${o}-1`, { to: 'duplicate' });
      // Every fifth event keeps one intent open for a while, holding the checkpoint back.
      if (o % 5 !== 0) move(`lb-rule-${o}-2`, { to: 'dead-lettered', error: { o } });
    }
    if (offset > 12 && (offset - 12) % 5 === 0) {
      move(`lb-rule-${offset - 12}-2`, { to: 'rejected', error: { late: true } });
    }
  });
  // The PostgreSQL store commits a turn's batches when the turn ends: let it, every few events
  // (so the kill lands among commits in flight too).
  if (pg && offset % 3 === 0) await store.sync();
  // The checkpoint thread's answers come on the event loop: let them, so the kill lands among
  // checkpoints too.
  if (checkpointThread && offset % 3 === 0) await new Promise((r) => setImmediate(r));
  if (offset === readyAfter) {
    if (pg) await store.sync();
    process.stdout.write('ready\n');
  }
}
store.close();
