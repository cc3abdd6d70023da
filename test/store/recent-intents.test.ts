import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/fake-clock.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../src/store/open-sqlite-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-migrations.js';
import type { IntentRecord, Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { eventIntent } from './store-fixtures.js';

let dir: string;
let cleanup: () => void;
let clock: FakeClock;
const opened: Store[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  clock = new FakeClock();
});

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  cleanup();
});

function open(options: Partial<Parameters<typeof openSqliteStore>[0]> = {}): Store {
  const store = openSqliteStore({ dir, clock, ...options } as Parameters<
    typeof openSqliteStore
  >[0]);
  opened.push(store);
  return store;
}

/** Intents 1..n, one per ms, every third one then submitted (a later change). */
function fill(store: Store, n: number): void {
  for (let i = 1; i <= n; i++) {
    clock.set(clock.now() + 1);
    store.recordIntents([eventIntent(i, 0, { ruleId: i % 2 === 0 ? 'even' : 'odd' })]);
  }
  for (let i = 3; i <= n; i += 3) {
    clock.set(clock.now() + 1);
    store.transition(`lb-rule-${i}-0`, { to: 'submitted', submissionId: `s${i}` });
  }
}

/** Every page of the recent order, following the cursor as the ops API does. */
function pages(store: Store, query: { ruleId?: string; states?: ['submitted'] }, size: number) {
  const out: IntentRecord[][] = [];
  let before: { updatedAt: number; commandId: string } | undefined;
  for (;;) {
    const page = store.listIntents({
      ...query,
      order: 'recent',
      limit: size,
      ...(before === undefined ? {} : { before }),
    });
    if (page.length === 0) return out;
    out.push(page);
    const last = page[page.length - 1]!;
    before = { updatedAt: last.updatedAt, commandId: last.commandId };
  }
}

describe('listIntents in the recent order', () => {
  it('pages newest change first across folded rows and memory, each intent once', () => {
    // Folds after 7 log rows: some intents are folded rows, the latest are in memory only.
    const store = open({ foldAfterLogRows: 7 });
    fill(store, 25);
    const all = pages(store, {}, 4);
    const ids = all.flat().map((r) => r.commandId);
    expect(new Set(ids).size).toBe(25);
    // The submitted ones changed last, newest first; then the rest by creation, newest first.
    expect(ids.slice(0, 3)).toEqual(['lb-rule-24-0', 'lb-rule-21-0', 'lb-rule-18-0']);
    expect(ids.slice(8, 11)).toEqual(['lb-rule-25-0', 'lb-rule-23-0', 'lb-rule-22-0']);
    const times = all.flat().map((r) => r.updatedAt);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(all.slice(0, -1).every((p) => p.length === 4)).toBe(true);
  });

  it('filters by rule and by state, with the cursor', () => {
    const store = open({ foldAfterLogRows: 5 });
    fill(store, 20);
    const even = pages(store, { ruleId: 'even' }, 3).flat();
    expect(even.map((r) => r.ruleId)).toEqual(Array(10).fill('even'));
    const submitted = pages(store, { states: ['submitted'] }, 2).flat();
    expect(submitted.map((r) => r.commandId)).toEqual(
      [18, 15, 12, 9, 6, 3].map((i) => `lb-rule-${i}-0`),
    );
  });

  it('is the same after a restart (everything folded)', () => {
    const store = open({ foldAfterLogRows: 6 });
    fill(store, 15);
    const before = pages(store, {}, 4).flat();
    store.close();
    expect(pages(open(), {}, 4).flat()).toEqual(before);
  });
});

describe('listIntents in the recent order, at scale', () => {
  it('pages a journal of 10,500 intents (most folded, the latest in memory) each once, in order', () => {
    const store = open();
    const n = 10_500;
    for (let i = 1; i <= n; i += 500) {
      clock.set(clock.now() + 1);
      store.batch(() =>
        store.recordIntents(Array.from({ length: 500 }, (_, k) => eventIntent(i + k))),
      );
    }
    const seen = new Set<string>();
    let last: IntentRecord | undefined;
    let pages = 0;
    for (const page of pages1000(store)) {
      pages += 1;
      for (const r of page) {
        if (last !== undefined) expect(byRecentOrder(last, r)).toBeLessThan(0);
        seen.add(r.commandId);
        last = r;
      }
    }
    expect(pages).toBe(11);
    expect(seen.size).toBe(n);
  });
});

function* pages1000(store: Store): Generator<IntentRecord[]> {
  let before: { updatedAt: number; commandId: string } | undefined;
  for (;;) {
    const page = store.listIntents({
      order: 'recent',
      limit: 1000,
      ...(before === undefined ? {} : { before }),
    });
    if (page.length === 0) return;
    yield page;
    const last = page[page.length - 1]!;
    before = { updatedAt: last.updatedAt, commandId: last.commandId };
  }
}

/** Negative when `a` comes first: the later change, then the greater commandId. */
function byRecentOrder(a: IntentRecord, b: IntentRecord): number {
  return b.updatedAt - a.updatedAt || (a.commandId > b.commandId ? -1 : 1);
}

describe('schema version 4', () => {
  it('opens a version 3 state directory and adds the indexes of the recent order', () => {
    const v3 = SQLITE_MIGRATIONS.filter((m) => m.version <= 3);
    const old = open({ migrations: v3 });
    fill(old, 9);
    const before = old.listIntents({ limit: 100 });
    old.close();
    const store = open();
    expect(store.listIntents({ limit: 100 })).toEqual(before);
    expect(store.listIntents({ order: 'recent', limit: 2 }).map((r) => r.commandId)).toEqual([
      'lb-rule-9-0',
      'lb-rule-6-0',
    ]);
    store.close();
    const db = new Database(join(dir, SQLITE_STORE_FILE), { readonly: true });
    try {
      const names = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%recent'")
        .pluck()
        .all();
      expect(names.sort()).toEqual(['intents_recent', 'intents_rule_recent']);
      // The first page of a 10,000-intent journal is read through the index, not a sort.
      const plan = db
        .prepare(
          'EXPLAIN QUERY PLAN SELECT * FROM intents WHERE rule_id = ? ORDER BY updated_at DESC, command_id DESC LIMIT 100',
        )
        .all('even') as { detail: string }[];
      expect(plan.map((p) => p.detail).join('\n')).not.toMatch(/TEMP B-TREE/);
    } finally {
      db.close();
    }
  });
});
