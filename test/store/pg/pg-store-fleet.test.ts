import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import type { LeaseHold } from '../../../src/store/pg/commit-fence.js';
import { openPgStore } from '../../../src/store/pg/open-pg-store.js';
import type { PgStore } from '../../../src/store/pg/pg-store.js';
import { recordRuleOrigins } from '../../../src/store/pg/rule-origins.js';
import { journalLines } from '../../../src/store/journal-lines.js';
import { parseJournalLines } from '../../../src/store/read-journal-lines.js';
import type { NewIntent } from '../../../src/store/store.js';
import { describeWithPg } from '../../support/describe-with-pg.js';
import { eventIntent } from '../store-fixtures.js';

// A fleet member's store (`rules`): only its rules' state, a checkpoint row per rule.

function intentOf(ruleId: string, offset: number): NewIntent {
  const base = eventIntent(offset);
  const commandId = `lb-${ruleId}-${offset}`;
  return { ...base, commandId, ruleId, payload: { ...(base.payload as object), commandId } };
}

describeWithPg('the PostgreSQL store of a fleet member', (server) => {
  let url: string;
  let reader: pg.Client;
  const stores: PgStore[] = [];
  const clock = new FakeClock();
  beforeEach(async () => {
    url = await server().freshDatabase();
    reader = new pg.Client({ connectionString: url });
    await reader.connect();
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.closeAsync().catch(() => undefined);
    await reader.end();
  });

  async function open(
    rules: readonly string[] | undefined,
    holds: LeaseHold[][] = [],
  ): Promise<PgStore> {
    const store = await openPgStore({
      url,
      schema: 'fleet',
      clock,
      ...(rules === undefined ? {} : { rules }),
      // What each commit writes under, recorded (no fence: the leases are lease-fence's tests).
      holdsFor: (ids) => {
        const h = [...ids].sort().map((ruleId) => ({ ruleId, generation: 1 }));
        holds.push(h);
        return h;
      },
    });
    stores.push(store);
    return store;
  }

  async function checkpoints(): Promise<Record<string, number>> {
    const { rows } = await reader.query<{ owner: string; resume_offset: string }>(
      'SELECT owner, resume_offset FROM fleet.lb_checkpoints ORDER BY owner',
    );
    return Object.fromEntries(rows.map((r) => [r.owner, Number(r.resume_offset)]));
  }

  it('writes its checkpoint to a row per rule, under every rule lease, and loads only its rules', async () => {
    const holdsA: LeaseHold[][] = [];
    const a = await open(['a1', 'a2'], holdsA);
    const b = await open(['b']);
    a.recordIntents([intentOf('a1', 10)]);
    b.recordIntents([intentOf('b', 11)]);
    a.advanceCheckpoint(20);
    b.advanceCheckpoint(30);
    await Promise.all([a.sync(), b.sync()]);
    // Each checkpoint stops below its open intent; every rule of the store gets the row.
    expect(await checkpoints()).toEqual({ 'rule:a1': 9, 'rule:a2': 9, 'rule:b': 10 });
    expect(holdsA.at(-1)).toEqual([
      { ruleId: 'a1', generation: 1 },
      { ruleId: 'a2', generation: 1 },
    ]);
    a.transition('lb-a1-10', { to: 'submitted', submissionId: 's' });
    a.transition('lb-a1-10', { to: 'succeeded', completionOffset: 12 });
    a.advanceCheckpoint(40);
    await a.sync();
    expect((await checkpoints())['rule:a1']).toBe(40);

    // A member taking b and a2 over: b's open intent, the lowest of their checkpoints.
    const c = await open(['a2', 'b']);
    expect(c.checkpoint()).toBe(10);
    expect(c.openIntents().map((i) => i.commandId)).toEqual(['lb-b-11']);
    expect(c.getIntent('lb-a1-10')).toBeUndefined();

    // Its checkpoint (b had processed 30) does not move a2's row back: a wrote 40 there.
    c.transition('lb-b-11', { to: 'submitted', submissionId: 's' });
    c.transition('lb-b-11', { to: 'succeeded', completionOffset: 12 });
    c.advanceCheckpoint(25);
    await c.sync();
    expect(await checkpoints()).toEqual({ 'rule:a1': 40, 'rule:a2': 40, 'rule:b': 30 });
  });

  it("takes the single bot's checkpoint for a rule without its own row, and starts fresh without either", async () => {
    expect((await open(['x'])).checkpoint()).toBeUndefined();
    const single = await open(undefined);
    single.advanceCheckpoint(50);
    await single.sync();
    await reader.query(
      "INSERT INTO fleet.lb_checkpoints (owner, resume_offset, processed_offset) VALUES ('rule:y', 70, 70)",
    );
    expect((await open(['x'])).checkpoint()).toBe(50);
    expect((await open(['y'])).checkpoint()).toBe(70);
    expect((await open(['x', 'y'])).checkpoint()).toBe(50);
  });

  it('records where rules new to the fleet begin: once, by the first member that knows them', async () => {
    await open(['a']); // the schema, migrated
    // The first member to start: both rules begin at its start position.
    expect(await recordRuleOrigins(reader, 'fleet', ['a', 'b'], 7, { takeDefault: true })).toEqual([
      'a',
      'b',
    ]);
    // Another member (a later ledger end), or a restart: the rows stay where they were.
    expect(await recordRuleOrigins(reader, 'fleet', ['a', 'b'], 40, { takeDefault: true })).toEqual(
      [],
    );
    // A rule reloaded in later begins at the reload; the owner's progress is never touched.
    const owner = await open(['a', 'b']);
    expect(owner.checkpoint()).toBe(7);
    owner.advanceCheckpoint(60);
    await owner.sync();
    expect(
      await recordRuleOrigins(reader, 'fleet', ['a', 'b', 'c'], 55, { takeDefault: false }),
    ).toEqual(['c']);
    expect(await checkpoints()).toEqual({ 'rule:a': 60, 'rule:b': 60, 'rule:c': 55 });
    expect((await open(['c'])).checkpoint()).toBe(55);
  });

  it("a fleet following a single bot: its rules begin at the single bot's checkpoint at the first start, not at a reload", async () => {
    const single = await open(undefined);
    single.advanceCheckpoint(50);
    await single.sync();
    await single.closeAsync();
    expect(await recordRuleOrigins(reader, 'fleet', ['x'], 90, { takeDefault: true })).toEqual([
      'x',
    ]);
    expect(await recordRuleOrigins(reader, 'fleet', ['y'], 90, { takeDefault: false })).toEqual([
      'y',
    ]);
    expect(await checkpoints()).toEqual({ default: 50, 'rule:x': 50, 'rule:y': 90 });
  });

  it('shares the writer lock between members, and keeps a single bot or a writing command out', async () => {
    const member = (): Promise<PgStore> =>
      openPgStore({ url, schema: 'fleet', clock, rules: ['a'], exclusive: 'shared' });
    stores.push(await member(), await member());
    const single = openPgStore({ url, schema: 'fleet', clock, exclusive: true });
    await expect(single).rejects.toMatchObject({ code: 'STORE_LOCKED' });
    for (const s of stores.splice(0)) await s.closeAsync();
    stores.push(await openPgStore({ url, schema: 'fleet', clock, exclusive: true }));
    await expect(member()).rejects.toMatchObject({
      code: 'STORE_LOCKED',
      message: expect.stringMatching(/without `fleet`/) as unknown,
    });
  });

  it("exports a fleet's checkpoint per rule, and a restore puts each back", async () => {
    const a = await open(['a']);
    const b = await open(['b']);
    a.recordIntents([intentOf('a', 10)]);
    a.advanceCheckpoint(30);
    b.advanceCheckpoint(54);
    await Promise.all([a.sync(), b.sync()]);
    expect(await checkpoints()).toEqual({ 'rule:a': 9, 'rule:b': 54 });
    for (const st of stores.splice(0)) await st.closeAsync();
    // What `ledgerbot state export` opens: the schema as a whole, with no rules of its own.
    const whole = await openPgStore({ url, schema: 'fleet', clock });
    stores.push(whole);
    const journal = await whole.exportJournal();
    expect(journal).toMatchObject({
      // Where a store with one checkpoint (a single bot) resumes: the earliest rule's.
      checkpoint: 9,
      processedOffset: 30,
      ruleCheckpoints: [
        { ruleId: 'a', checkpoint: 9, processedOffset: 30 },
        { ruleId: 'b', checkpoint: 54, processedOffset: 54 },
      ],
    });
    // Through the file format and back, then into a fresh schema: each rule resumes where it was.
    const lines = [...journalLines(journal, 0)].join('');
    const parsed = parseJournalLines(Buffer.from(lines), 'journal.jsonl');
    const restored = await openPgStore({ url, schema: 'restored', clock });
    await restored.importJournal(parsed);
    await expect(restored.importJournal(parsed)).rejects.toMatchObject({ code: 'STORE_NOT_EMPTY' });
    await restored.closeAsync();
    const member = await openPgStore({ url, schema: 'restored', clock, rules: ['b'] });
    stores.push(member);
    expect(member.checkpoint()).toBe(54);
    const newRule = await openPgStore({ url, schema: 'restored', clock, rules: ['c'] });
    stores.push(newRule);
    expect(newRule.checkpoint()).toBe(9);
  });

  it("compacts only its own rules' intents", async () => {
    const a = await open(['a']);
    const b = await open(['b']);
    for (const [store, rule] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      const id = `lb-${rule}-5`;
      store.recordIntents([intentOf(rule, 5)]);
      store.transition(id, { to: 'submitted', submissionId: 's' });
      store.transition(id, { to: 'succeeded', completionOffset: 6 });
      store.advanceCheckpoint(10);
      await store.sync();
    }
    clock.set(clock.now() + 10_000);
    expect(await a.compactAsync(1_000)).toBe(1);
    const { rows } = await reader.query<{ rule_id: string }>(
      'SELECT rule_id FROM fleet.lb_intents',
    );
    expect(rows.map((r) => r.rule_id)).toEqual(['b']);
  });
});
