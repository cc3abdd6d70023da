import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock, type TimerHandle } from '../../../src/core/clock.js';
import type { LeaseHold } from '../../../src/store/pg/commit-fence.js';
import { FLEET_PG_MIGRATIONS } from '../../../src/store/pg/fleet-pg-migrations.js';
import { leaseFence } from '../../../src/store/pg/lease-fence.js';
import { LeaseKeeper } from '../../../src/store/pg/lease-keeper.js';
import { LeaseStore, type LeaseRow } from '../../../src/store/pg/lease-store.js';
import { runPgMigrations } from '../../../src/store/pg/run-pg-migrations.js';
import { StoreError } from '../../../src/store/store-error.js';
import { describeWithPg } from '../../support/describe-with-pg.js';
import { waitFor } from '../../support/wait-for.js';

const SCHEMA = 'fleet_test';
/** Short leases so the tests take seconds; a round (renewal) is a third of it. */
const LEASE_MS = 2_000;
const RULES = Array.from({ length: 12 }, (_, i) => `rule-${String(i).padStart(2, '0')}`);

/**
 * The system clock, whose timers can be held back: a paused keeper misses its rounds as a
 * SIGSTOPped process would, while time goes on.
 */
class PausableClock implements Clock {
  #paused = false;
  #held: (() => void)[] = [];
  now(): number {
    return systemClock.now();
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    return systemClock.setTimeout(() => (this.#paused ? this.#held.push(fn) : fn()), ms);
  }
  clearTimeout(handle: TimerHandle): void {
    systemClock.clearTimeout(handle);
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }
  pause(): void {
    this.#paused = true;
  }
  resume(): void {
    this.#paused = false;
    for (const fn of this.#held.splice(0)) fn();
  }
}

type Member = {
  keeper: LeaseKeeper;
  store: LeaseStore;
  pool: pg.Pool;
  clock: PausableClock;
  lost: LeaseHold[];
  errors: unknown[];
};

describeWithPg('fleet leases on PostgreSQL', (server) => {
  let url: string;
  const members: Member[] = [];
  const pools: pg.Pool[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const m of members.splice(0)) {
      m.clock.resume();
      await m.keeper.stop().catch(() => undefined);
    }
    for (const pool of pools.splice(0)) await pool.end();
  });

  async function freshFleet(): Promise<LeaseStore> {
    url = await server().freshDatabase('fleet');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await runPgMigrations(client, SCHEMA, [FLEET_PG_MIGRATIONS]);
    } finally {
      await client.end();
    }
    return observer();
  }

  /** A store on its own pool, to look at the tables as `/status` would. */
  function observer(): LeaseStore {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pools.push(pool);
    return new LeaseStore(pool, SCHEMA, LEASE_MS);
  }

  function member(name: string, ruleIds: readonly string[] = RULES, leaseMs = LEASE_MS): Member {
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    // An idle connection the server drops (the test that stops it) must not crash the test.
    pool.on('error', () => undefined);
    pools.push(pool);
    const store = new LeaseStore(pool, SCHEMA, leaseMs);
    const clock = new PausableClock();
    const lost: LeaseHold[] = [];
    const errors: unknown[] = [];
    const keeper = new LeaseKeeper({
      store,
      schema: SCHEMA,
      me: { instanceId: `${name}-instance`, name },
      clock,
      ruleIds,
      events: { lost: (holds) => lost.push(...holds), error: (err) => errors.push(err) },
    });
    const m = { keeper, store, pool, clock, lost, errors };
    members.push(m);
    keeper.start();
    return m;
  }

  /** Rule counts per owner name, of the leases held and not expired. */
  function shares(rows: readonly LeaseRow[]): string {
    const out = new Map<string, number>();
    for (const r of rows) {
      if (r.expired || r.ownerName === null) continue;
      out.set(r.ownerName, (out.get(r.ownerName) ?? 0) + 1);
    }
    return JSON.stringify(Object.fromEntries([...out].sort()));
  }

  async function waitForShares(
    store: LeaseStore,
    want: Record<string, number>,
    what: string,
  ): Promise<LeaseRow[]> {
    return waitFor(
      () => store.leases(),
      (rows) => shares(rows) === JSON.stringify(want),
      15_000,
      what,
    );
  }

  /** When the last of `rules` was taken (by the database's clock, this machine's). */
  function lastTaken(rows: readonly LeaseRow[], rules: readonly { ruleId: string }[]): number {
    const ids = new Set(rules.map((r) => r.ruleId));
    return Math.max(...rows.filter((r) => ids.has(r.ruleId)).map((r) => r.acquiredAt));
  }

  /** A commit as the store makes one: the fence, then a write, in one transaction. */
  async function commitUnder(
    pool: pg.Pool,
    fence: ReturnType<typeof leaseFence>,
    holds: readonly LeaseHold[],
  ): Promise<void> {
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await fence.check(tx, holds);
      await tx.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.t (rule_id text)`);
      await tx.query(`INSERT INTO ${SCHEMA}.t SELECT unnest($1::text[])`, [
        holds.map((h) => h.ruleId),
      ]);
      await tx.query('COMMIT');
    } catch (err) {
      await tx.query('ROLLBACK');
      throw err;
    } finally {
      tx.release();
    }
  }

  it('a heartbeat with the rule ids unchanged keeps them, and a member forgotten meanwhile joins again with them', async () => {
    const store = await freshFleet();
    const me = { instanceId: 'i-1', name: 'a' };
    const rules = { hash: 'h1', ids: ['r1', 'r2'] };
    await store.heartbeat(me, rules, true);
    // The ids unchanged: only the beat (an upsert leaving them out broke on NOT NULL).
    await store.heartbeat(me, rules, false);
    expect(await store.ruleIdsOf(['i-1'])).toEqual(new Map([['i-1', new Set(['r1', 'r2'])]]));
    await store.leave('i-1');
    await store.heartbeat(me, rules, false);
    expect(await store.ruleIdsOf(['i-1'])).toEqual(new Map([['i-1', new Set(['r1', 'r2'])]]));
    expect((await store.members()).map((m) => [m.instanceId, m.live])).toEqual([['i-1', true]]);
  });

  it('two, then three members share the rules fairly, each rule held by one; the joining member takes only its share', async () => {
    const view = await freshFleet();
    const a = member('a');
    const b = member('b');
    const two = await waitForShares(view, { a: 6, b: 6 }, 'a and b holding 6 rules each');
    expect(two.map((r) => r.ruleId)).toEqual(RULES);
    // What each keeper believes it holds is what the table says.
    for (const [m, name] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      expect(m.keeper.held().map((h) => h.ruleId)).toEqual(
        two.filter((r) => r.ownerName === name).map((r) => r.ruleId),
      );
    }
    member('c');
    const three = await waitForShares(
      view,
      { a: 4, b: 4, c: 4 },
      'a, b and c holding 4 rules each',
    );
    const before = new Map(two.map((r) => [r.ruleId, r]));
    for (const r of three) {
      const was = before.get(r.ruleId)!;
      if (r.ownerName === 'c') {
        // Taken from a or b after they released it: the next generation.
        expect(r.generation).toBe(was.generation + 1);
      } else {
        // a and b kept what they had, at the same generation.
        expect(r.ownerName).toBe(was.ownerName);
        expect(r.generation).toBe(was.generation);
      }
    }
    expect((await view.members()).map((m) => [m.name, m.live])).toEqual([
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
    expect(a.lost).toEqual([]);
  }, 40_000);

  it('a clean stop releases at once and leaves the fleet; the others take the rules', async () => {
    const view = await freshFleet();
    member('a');
    const b = member('b');
    await waitForShares(view, { a: 6, b: 6 }, 'a and b holding 6 rules each');
    const released: LeaseHold[] = [];
    const heldByB = b.keeper.held();
    await b.keeper.stop();
    const rows = await view.leases();
    for (const r of rows.filter((x) => heldByB.some((h) => h.ruleId === x.ruleId))) {
      expect(r.owner).toBeNull();
      expect(r.expired).toBe(true);
      released.push({ ruleId: r.ruleId, generation: r.generation });
    }
    expect(released).toEqual(heldByB);
    expect((await view.members()).map((m) => m.name)).toEqual(['a']);
    // a takes them at its next round, sooner than a lease period would allow.
    const stopped = Date.now();
    const rows2 = await waitForShares(view, { a: 12 }, 'a holding all 12 rules');
    expect(lastTaken(rows2, heldByB) - stopped).toBeLessThan(LEASE_MS);
  }, 40_000);

  it('a paused member loses its rules to the others at the next generation, is fenced, and learns it lost them when it wakes', async () => {
    const view = await freshFleet();
    const a = member('a');
    member('b');
    const c = member('c');
    const three = await waitForShares(
      view,
      { a: 4, b: 4, c: 4 },
      'a, b and c holding 4 rules each',
    );
    const stale = c.keeper.held();
    expect(stale).toHaveLength(4);
    const fenceC = leaseFence(c.keeper);
    await commitUnder(c.pool, fenceC, stale); // holds while it holds

    c.clock.pause(); // as SIGSTOP would: no more rounds
    const paused = Date.now();
    const after = await waitForShares(view, { a: 6, b: 6 }, "a and b taking c's rules");
    const tookMs = lastTaken(after, stale) - paused;
    for (const h of stale) {
      const row = after.find((r) => r.ruleId === h.ruleId)!;
      expect(row.generation).toBe(h.generation + 1);
      expect(['a', 'b']).toContain(row.ownerName);
    }
    // Within two lease periods of its last round (the server's clock is this machine's).
    expect(tookMs).toBeLessThan(2 * LEASE_MS);
    expect(three.length).toBe(12);

    // Still paused, c's keeper has not heard; the database refuses the commit all the same.
    expect(c.keeper.held()).toEqual(stale);
    const blind = leaseFence({
      schema: SCHEMA,
      instanceId: c.keeper.instanceId,
      isValid: () => true,
      lost: () => undefined,
    });
    const err = await commitUnder(c.pool, blind, stale).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('STORE_FENCED');
    expect((err as StoreError).message).toContain(stale[0]!.ruleId);
    const { rows } = await c.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${SCHEMA}.t`);
    expect(Number(rows[0]!.n)).toBe(4); // only the commit made while c held them

    // c's own fence refuses without asking: by its clock the leases are past their time.
    await expect(commitUnder(c.pool, fenceC, stale)).rejects.toMatchObject({
      code: 'STORE_FENCED',
    });
    expect(c.lost.map((h) => h.ruleId).sort()).toEqual(stale.map((h) => h.ruleId).sort());

    // Woken, it rejoins and gets a share again, at new generations; its old writes stay refused.
    c.clock.resume();
    const back = await waitForShares(view, { a: 4, b: 4, c: 4 }, 'c back with its share');
    for (const h of c.keeper.held()) {
      const row = back.find((r) => r.ruleId === h.ruleId)!;
      expect(row.generation).toBe(h.generation);
    }
    await expect(commitUnder(c.pool, fenceC, stale)).rejects.toMatchObject({
      code: 'STORE_FENCED',
    });
    await commitUnder(c.pool, fenceC, c.keeper.held());
    expect(a.lost).toEqual([]);
  }, 60_000);

  it('a paused member, woken after the take-over, learns from its next round what it lost, without a commit', async () => {
    const view = await freshFleet();
    const a = member('a');
    const b = member('b');
    await waitForShares(view, { a: 6, b: 6 }, 'a and b holding 6 rules each');
    const stale = b.keeper.held();
    b.clock.pause();
    await waitForShares(view, { a: 12 }, "a taking b's rules");
    b.clock.resume();
    // The round that wakes it renews, finds its leases at another generation, and reports them.
    await waitFor(
      () => b.lost.length,
      (n) => n >= stale.length,
      10_000,
      'b reporting its lost leases',
    );
    expect(b.lost.map((h) => h.ruleId).sort()).toEqual(stale.map((h) => h.ruleId).sort());
    expect(a.lost).toEqual([]);
  }, 40_000);

  it('a commit holding the fence keeps a take-over waiting until it has committed', async () => {
    const view = await freshFleet();
    const a = member('a', ['only']);
    await waitForShares(view, { a: 1 }, 'a holding the rule');
    a.clock.pause();
    const hold = a.keeper.held()[0]!;
    // The lease runs out in the database, as if a had been paused; nobody took it yet.
    await a.pool.query(
      `UPDATE ${SCHEMA}.lb_fleet_leases SET expires_at = now() - interval '1 second'`,
    );
    const fence = leaseFence({
      schema: SCHEMA,
      instanceId: a.keeper.instanceId,
      isValid: () => true,
      lost: () => undefined,
    });
    const tx = await a.pool.connect();
    await tx.query('BEGIN');
    await fence.check(tx, [hold]); // still a's at its generation: passes, and locks the row
    const b = new LeaseStore(a.pool, SCHEMA, LEASE_MS);
    let taken: LeaseHold[] | undefined;
    const takeover = b.acquire('b-instance', ['only']).then((t) => (taken = t));
    await new Promise((r) => setTimeout(r, 300));
    expect(taken).toBeUndefined();
    await tx.query('COMMIT');
    tx.release();
    await takeover;
    expect(taken).toEqual([{ ruleId: 'only', generation: hold.generation + 1 }]);
    await expect(commitUnder(a.pool, fence, [hold])).rejects.toMatchObject({
      code: 'STORE_FENCED',
    });
  }, 40_000);

  it('holdsFor gives the held generation, and generation 0 for a rule not held, which the fence refuses', async () => {
    await freshFleet();
    const a = member('a', ['r1']);
    await waitFor(
      () => a.keeper.held().length,
      (n) => n === 1,
      10_000,
      'a holding r1',
    );
    const fence = leaseFence(a.keeper);
    const held = a.keeper.holdsFor(new Set(['r1']));
    expect(held).toEqual(a.keeper.held());
    await commitUnder(a.pool, fence, held);
    const withOther = a.keeper.holdsFor(['r1', 'not-mine']);
    expect(withOther[1]).toEqual({ ruleId: 'not-mine', generation: 0 });
    await expect(commitUnder(a.pool, fence, withOther)).rejects.toMatchObject({
      code: 'STORE_FENCED',
      message: expect.stringContaining('"not-mine"') as unknown,
    });
    // Asked of the database too (a source that trusts every hold): no lease has generation 0.
    const blind = leaseFence({
      schema: SCHEMA,
      instanceId: a.keeper.instanceId,
      isValid: () => true,
      lost: () => undefined,
    });
    await expect(commitUnder(a.pool, blind, withOther)).rejects.toMatchObject({
      code: 'STORE_FENCED',
    });
    // The refused rule was not a's: a keeps r1.
    expect(a.keeper.held().map((h) => h.ruleId)).toEqual(['r1']);
    expect(a.lost).toEqual([]);
  }, 30_000);

  it('while a reload reaches one member before another, a rule goes only to a member that has it', async () => {
    const view = await freshFleet();
    const a = member('a');
    const b = member('b');
    await waitForShares(view, { a: 6, b: 6 }, 'a and b holding 6 rules each');
    const ownerOf = (rows: readonly LeaseRow[], rule: string): string | null | undefined =>
      rows.find((r) => r.ruleId === rule && !r.expired)?.ownerName;

    a.keeper.setRules([...RULES, 'rule-new']); // b has not reloaded yet
    const onlyA = await waitForShares(view, { a: 7, b: 6 }, 'a taking the rule only it has');
    expect(ownerOf(onlyA, 'rule-new')).toBe('a');

    b.keeper.setRules([...RULES, 'rule-new']); // the reload reaches b: nothing moves
    await new Promise((r) => setTimeout(r, LEASE_MS));
    const both = await view.leases();
    expect(shares(both)).toBe(JSON.stringify({ a: 7, b: 6 }));
    expect(both.map((r) => [r.ruleId, r.owner, r.generation])).toEqual(
      onlyA.map((r) => [r.ruleId, r.owner, r.generation]),
    );

    a.keeper.setRules(RULES.slice(1)); // a drops rule-00, b still has it
    const dropped = await waitFor(
      () => view.leases(),
      (rows) => ownerOf(rows, RULES[0]!) === 'b',
      15_000,
      'b holding the rule a dropped',
    );
    expect(a.keeper.held().map((h) => h.ruleId)).not.toContain(RULES[0]);
    expect(new Set((await view.members()).map((m) => m.rulesHash)).size).toBe(2);
    expect(dropped.filter((r) => r.ownerName === 'a').map((r) => r.ruleId)).not.toContain(RULES[0]);
    expect(a.lost).toEqual([]);
    expect(b.lost).toEqual([]);
  }, 60_000);

  it('a member cut off from the database counts its leases lost after one period, by its own clock', async () => {
    await freshFleet();
    const a = member('a', ['r1', 'r2']);
    await waitFor(
      () => a.keeper.held().length,
      (n) => n === 2,
      10_000,
      'a holding both rules',
    );
    const held = a.keeper.held();
    const fence = leaseFence(a.keeper);
    server().stop('immediate');
    try {
      const cut = Date.now();
      await waitFor(
        () => a.lost.length,
        (n) => n === 2,
        10_000,
        'a counting its leases lost',
      );
      expect(Date.now() - cut).toBeLessThan(2 * LEASE_MS);
      expect(a.lost).toEqual(held);
      expect(a.errors.length).toBeGreaterThan(0);
      expect(a.keeper.held()).toEqual([]);
      // Refused without a round trip (the database is down).
      const tx = { query: () => Promise.reject(new Error('no database')) };
      await expect(fence.check(tx as unknown as pg.ClientBase, held)).rejects.toMatchObject({
        code: 'STORE_FENCED',
      });
    } finally {
      server().start();
    }
    // Back, it takes them again at the next generation.
    await waitFor(
      () => a.keeper.held(),
      (h) => h.length === 2,
      15_000,
      'a holding both rules again',
    );
    expect(a.keeper.held().map((h) => h.generation)).toEqual(held.map((h) => h.generation + 1));
  }, 60_000);

  describe('members in their own processes', () => {
    function child(
      name: string,
      leaseMs = LEASE_MS,
    ): {
      proc: ChildProcess;
      events: { event: string; value: unknown }[];
    } {
      const proc = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          join(import.meta.dirname, 'lease-keeper-child.ts'),
          url,
          SCHEMA,
          name,
          String(leaseMs),
          RULES.join(','),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(proc);
      const events: { event: string; value: unknown }[] = [];
      let buffer = '';
      proc.stdout.on('data', (d: Buffer) => {
        buffer += d.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) events.push(JSON.parse(line) as (typeof events)[number]);
      });
      return { proc, events };
    }

    it('the leases of a SIGKILLed member are taken within two lease periods', async () => {
      // Longer leases here: the bound is on time, and the machine may be busy.
      const leaseMs = 3_000;
      const view = await freshFleet();
      member('a', RULES, leaseMs);
      const k = child('k', leaseMs);
      const two = await waitForShares(view, { a: 6, k: 6 }, 'a and the child holding 6 each');
      const exited = new Promise((r) => k.proc.once('exit', r));
      expect(k.proc.kill('SIGKILL')).toBe(true);
      const killed = Date.now();
      await exited;
      const after = await waitForShares(view, { a: 12 }, "a taking the killed child's rules");
      const tookMs =
        lastTaken(
          after,
          two.filter((r) => r.ownerName === 'k'),
        ) - killed;
      expect(tookMs).toBeLessThan(2 * leaseMs);
      console.info(`take-over after SIGKILL: ${tookMs} ms (lease ${leaseMs} ms)`);
    }, 60_000);

    it('a SIGSTOPped member is taken over, and reports its leases lost once SIGCONTinued', async () => {
      const view = await freshFleet();
      member('a');
      const k = child('k');
      const two = await waitForShares(view, { a: 6, k: 6 }, 'a and the child holding 6 each');
      const childRules = two.filter((r) => r.ownerName === 'k');
      expect(k.proc.kill('SIGSTOP')).toBe(true);
      const after = await waitForShares(view, { a: 12 }, "a taking the stopped child's rules");
      for (const r of childRules) {
        expect(after.find((x) => x.ruleId === r.ruleId)!.generation).toBe(r.generation + 1);
      }
      expect(k.proc.kill('SIGCONT')).toBe(true);
      const lost = await waitFor(
        () =>
          k.events
            .filter((e) => e.event === 'lost')
            .flatMap((e) => e.value as LeaseHold[])
            .map((h) => h.ruleId)
            .sort(),
        (ids) => ids.length >= childRules.length,
        10_000,
        'the child reporting its lost leases',
      );
      expect(lost).toEqual(childRules.map((r) => r.ruleId).sort());
      await waitForShares(view, { a: 6, k: 6 }, 'the child back with its share');
    }, 60_000);
  });
});
