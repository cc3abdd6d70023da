import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { IllegalStateError } from '../../src/core/illegal-state-error.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { openPgStore } from '../../src/store/pg/open-pg-store.js';
import type { PgStore } from '../../src/store/pg/pg-store.js';
import type {
  IntentChange,
  IntentState,
  NewIntent,
  RecordIntentsResult,
  Store,
} from '../../src/store/store.js';
import { pgSkipReason, startPgServer, type PgServer } from '../support/pg-server.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

// The Store contract the runtime relies on, the same for every store: each case runs on the
// SQLite store and on the PostgreSQL one (memory is the truth between commits in both, so the
// synchronous answers must agree; what a reopen brings back is tested per store).

type StoreKind = {
  readonly name: string;
  readonly skip: string | undefined;
  setup(): Promise<void>;
  open(clock: FakeClock): Promise<{ store: Store; close(): Promise<void> }>;
  teardown(): void;
};

let pgServer: PgServer | undefined;
const pgSkip = pgSkipReason();

const KINDS: readonly StoreKind[] = [
  {
    name: 'SQLite',
    skip: undefined,
    setup: () => Promise.resolve(),
    open: (clock) => {
      const t = tempDir();
      const store = openSqliteStore({ dir: t.dir, clock });
      return Promise.resolve({
        store,
        close: () => {
          store.close();
          t.cleanup();
          return Promise.resolve();
        },
      });
    },
    teardown: () => undefined,
  },
  {
    name: 'PostgreSQL',
    skip: pgSkip,
    setup: async () => {
      pgServer = await startPgServer();
    },
    open: async (clock) => {
      const store: PgStore = await openPgStore({
        url: await pgServer!.freshDatabase(),
        schema: 'contract',
        clock,
      });
      return { store, close: () => store.closeAsync() };
    },
    teardown: () => pgServer?.close(),
  },
];

/** A valid change record for a target state. */
function changeTo(to: IntentState): IntentChange {
  switch (to) {
    case 'submitted':
      return { to, submissionId: 's2' };
    case 'pending':
      return { to, nextAttemptAt: 0 };
    case 'rejected':
    case 'dead-lettered':
      return { to, error: { code: 'X' } };
    default:
      return { to };
  }
}

for (const kind of KINDS) {
  describe.skipIf(kind.skip !== undefined)(
    `the Store contract on ${kind.name}${kind.skip === undefined ? '' : ` (skipped: ${kind.skip})`}`,
    () => {
      let store: Store;
      let close: () => Promise<void>;
      beforeAll(() => kind.setup(), 120_000);
      afterAll(() => kind.teardown());
      beforeEach(async () => {
        ({ store, close } = await kind.open(new FakeClock()));
      });
      afterEach(() => close());

      function finish(commandId: string, to: 'succeeded' | 'duplicate' = 'succeeded'): void {
        store.transition(commandId, { to: 'submitted', submissionId: `sub-${commandId}` });
        store.transition(commandId, { to });
      }

      describe('intent lifecycle', () => {
        it.each<[IntentState, IntentState]>([
          ['succeeded', 'submitted'],
          ['succeeded', 'pending'],
          ['duplicate', 'succeeded'],
          ['rejected', 'submitted'],
          ['dead-lettered', 'pending'],
          ['dead-lettered', 'submitted'],
        ])('refuses %s → %s: terminal states are final', (from, to) => {
          store.recordIntents([eventIntent(1)]);
          const id = 'lb-rule-1-0';
          store.transition(id, { to: 'submitted', submissionId: 's' });
          store.transition(id, changeTo(from));
          const change = changeTo(to);
          expect(() => store.transition(id, change)).toThrow(IllegalStateError);
          expect(() => store.transition(id, change)).toThrow(
            `cannot go from ${from} to ${to}: ${from} is final`,
          );
          expect(store.getIntent(id)?.state).toBe(from);
        });

        it('throws STORE_UNKNOWN_INTENT for a commandId it never saw', () => {
          expect(() => store.transition('nope', { to: 'submitted', submissionId: 's' })).toThrow(
            expect.objectContaining({ code: 'STORE_UNKNOWN_INTENT' }),
          );
        });

        it('refuses payloads that are not JSON and offsets that are not offsets', () => {
          expect(() => store.recordIntents([eventIntent(1, 0, { payload: undefined })])).toThrow(
            expect.objectContaining({ code: 'STORE_NOT_JSON' }),
          );
          expect(() => store.recordIntents([eventIntent(1, 0, { payload: { n: 1n } })])).toThrow(
            expect.objectContaining({ code: 'STORE_NOT_JSON' }),
          );
          expect(() => store.recordIntents([eventIntent(-1)])).toThrow(
            expect.objectContaining({ code: 'STORE_BAD_ARGUMENT' }),
          );
        });
      });

      describe('checkpoint low-watermark', () => {
        it('does not pass an event with 3 intents until all three are terminal', () => {
          store.batch(() => {
            store.recordIntents([eventIntent(10, 0), eventIntent(10, 1), eventIntent(10, 2)]);
            store.advanceCheckpoint(10);
          });
          expect(store.checkpoint()).toBe(9);
          finish('lb-rule-10-0');
          expect(store.checkpoint()).toBe(9);
          store.transition('lb-rule-10-1', { to: 'rejected', error: { code: 'X' } });
          expect(store.checkpoint()).toBe(9);
          store.transition('lb-rule-10-2', { to: 'dead-lettered', error: { code: 'Y' } });
          expect(store.checkpoint()).toBe(10);
        });

        it('holds at the oldest open event when events finish out of order', () => {
          store.batch(() => {
            store.recordIntents([eventIntent(3), eventIntent(5), eventIntent(8)]);
            store.advanceCheckpoint(4);
          });
          store.batch(() => {
            store.recordIntents([]);
            store.advanceCheckpoint(12);
          });
          expect(store.checkpoint()).toBe(2);
          finish('lb-rule-8-0');
          expect(store.checkpoint()).toBe(2);
          finish('lb-rule-5-0', 'duplicate');
          expect(store.checkpoint()).toBe(2);
          finish('lb-rule-3-0');
          expect(store.checkpoint()).toBe(12);
        });

        it('moves with processed offsets when events produce no intents, and never moves back', () => {
          expect(store.checkpoint()).toBeUndefined();
          store.advanceCheckpoint(4);
          expect(store.checkpoint()).toBe(4);
          store.advanceCheckpoint(2);
          expect(store.checkpoint()).toBe(4);
          store.advanceCheckpoint(20);
          expect(store.checkpoint()).toBe(20);
        });

        it('recomputes at the end of the batch, so recording after advancing within a batch is safe', () => {
          store.batch(() => {
            store.advanceCheckpoint(30);
            store.recordIntents([eventIntent(30)]);
          });
          expect(store.checkpoint()).toBe(29);
        });

        it('is not held back by schedule (slot) intents', () => {
          store.batch(() => {
            store.recordIntents([
              eventIntent(2, 0, {
                commandId: 'lb-sched-1',
                trigger: { kind: 'slot', slot: 1_700_000_000_000, contractId: '00ab' },
              }),
            ]);
            store.advanceCheckpoint(6);
          });
          expect(store.checkpoint()).toBe(6);
        });

        it('does not move back when a dead letter older than the checkpoint is requeued', () => {
          store.batch(() => {
            store.recordIntents([eventIntent(3)]);
            store.advanceCheckpoint(3);
          });
          store.transition('lb-rule-3-0', { to: 'dead-lettered', error: { code: 'X' } });
          store.advanceCheckpoint(10);
          expect(store.checkpoint()).toBe(10);
          store.requeueDeadLetter('lb-rule-3-0');
          expect(store.checkpoint()).toBe(10);
          store.advanceCheckpoint(11);
          expect(store.checkpoint()).toBe(11);
        });

        it('resetCheckpoint jumps over open intents (pruned offsets) and later advances build on it', () => {
          store.batch(() => {
            store.recordIntents([eventIntent(3)]);
            store.advanceCheckpoint(3);
          });
          expect(store.checkpoint()).toBe(2);
          store.resetCheckpoint(100);
          expect(store.checkpoint()).toBe(100);
          expect(store.openIntents().map((i) => i.commandId)).toEqual(['lb-rule-3-0']);
          store.advanceCheckpoint(105);
          expect(store.checkpoint()).toBe(105);
        });
      });

      // What the runtime does before each recording: look up (a store that needs to), then
      // record in one batch.
      async function recordAgain(intent: NewIntent): Promise<RecordIntentsResult> {
        const lookUp = store.lookUpIntents?.([intent]);
        if (lookUp !== undefined) await lookUp;
        return store.batch(() => store.recordIntents([intent]));
      }

      describe('an intent recorded again after its commit', () => {
        const SLOT = 1_700_000_000_000;
        const slotIntent = eventIntent(4, 0, {
          commandId: 'lb-sched-again',
          trigger: { kind: 'slot', slot: SLOT, contractId: '00ab' },
        });

        it('of a completed slot run again is found and left as it is', async () => {
          store.beginSlot('rule', SLOT, 4);
          store.recordIntents([slotIntent]);
          finish('lb-sched-again');
          store.completeSlot('rule', SLOT);
          await store.sync();
          store.beginSlot('rule', SLOT, 4);
          const again = await recordAgain(slotIntent);
          expect(again.inserted).toEqual([]);
          expect(again.existing.map((r) => [r.commandId, r.state])).toEqual([
            ['lb-sched-again', 'succeeded'],
          ]);
          store.completeSlot('rule', SLOT);
          await store.sync();
          expect(store.openIntents()).toEqual([]);
        });

        it('of an event at or below the checkpoint (a replay, a recovery) is found and left as it is', async () => {
          store.batch(() => {
            store.recordIntents([eventIntent(5)]);
            store.advanceCheckpoint(5);
          });
          finish('lb-rule-5-0', 'duplicate');
          store.advanceCheckpoint(9);
          await store.sync();
          // Set back, as after pruning: the intent is above the checkpoint again.
          store.resetCheckpoint(3);
          await store.sync();
          const again = await recordAgain(eventIntent(5));
          expect(again.inserted).toEqual([]);
          expect(again.existing.map((r) => [r.commandId, r.state])).toEqual([
            ['lb-rule-5-0', 'duplicate'],
          ]);
          await store.sync();
          expect(store.openIntents()).toEqual([]);
        });
      });
    },
  );
}
