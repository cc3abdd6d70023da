import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { machineLine } from './bench-support.js';
import { keepBlocks, spliceBlock, summaryBlock } from './reliability-blocks.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SeededRandom } from '../src/core/seeded-random.js';
import { runBadInput, badInputFailures } from './chaos-bad-input.js';
import {
  ChaosBot,
  CLOSE_RULE_ID,
  editRules,
  EFFECT_RULE_ID,
  RELOADED_RULE_ID,
  writeRules,
} from './chaos-bots.js';
import {
  CHAOS_LEASE_MS,
  FLEET_SCHEMA,
  fleetConfigLine,
  openIntents,
  ruleOwnership,
  type RuleOwnership,
} from './chaos-fleet.js';
import {
  clearFaults,
  driveCommand,
  faultStats,
  invoicePlan,
  REJECTED_CURRENCY,
  setFaults,
  startChaosLedger,
  type DriverStats,
} from './chaos-ledger.js';
import { FULL_PLAN, killPoints, SMOKE_PLAN, storeCrashPoint } from './chaos-plan.js';
import {
  renderReliability,
  type ChaosResult,
  type FleetPause,
  type StoreCrash,
  type TimelineEntry,
} from './chaos-report.js';
import {
  ledgerLanded,
  ledgerVerdict,
  readPgJournal,
  readSqliteJournal,
  storeVerdict,
  type StoreVerdict,
} from './chaos-verdict.js';
import { pgBinDir, startPgServer, type PgServer } from './pg-server.js';

/**
 * `npm run chaos [-- --smoke] [--seed N] [--keep] [--store sqlite|postgres]`: the reliability
 * scenario of docs/reliability.md. The sandbox and the bots run as their own processes on
 * 127.0.0.1; faults stay on from the first invoice until everything has settled. Exits 1 on a
 * correctness failure (a duplicate, a missing effect, an intent left open, a dead letter the
 * scenario did not call for, bad input accepted).
 *
 *   --smoke            the CI size (about 30 s); the record goes to the temp directory
 *   --seed N           another seed (kill points, victims, down times, the store's crash)
 *   --keep             keep the work directory (bot logs, configs, state) after a passing run
 *   --store postgres   each replica's journal in its own schema of a PostgreSQL the run starts
 *                      (Debian's binaries, as the tests: bench/pg-server.ts; exits 1 without
 *                      them), and the server crashes once (`pg_ctl stop -m immediate`) at a
 *                      seeded point and comes back 1–3 s later: every replica running then must
 *                      stop by itself (its failed commit, or its failed open if it was starting),
 *                      and is restarted as a supervisor would, once the server is back. The
 *                      full run's record is docs/reliability-postgres.md. Default: sqlite.
 *   --fleet N          (implies --store postgres, no server crash) N replicas as fleet members
 *                      on one schema (`fleet: { name, leasePeriod: 3s }`), the last one joining
 *                      halfway; kills hit a member that owns rules, and another owner is
 *                      SIGSTOPped for 2.5 lease periods at a seeded point, then SIGCONTed: it
 *                      must say it lost its rules or was fenced. At the end every rule must be
 *                      run by exactly one live member, which holds its lease. The full run's
 *                      record is docs/reliability-fleet.md.
 */
const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean' },
    seed: { type: 'string' },
    keep: { type: 'boolean' },
    store: { type: 'string' },
    fleet: { type: 'string' },
  },
  strict: true,
});
const smoke = values.smoke === true;
const plan = smoke ? SMOKE_PLAN : FULL_PLAN;
const seed = values.seed === undefined ? 20_261_123 : Number(values.seed);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, not ${values.seed}`);
const fleetSize = values.fleet === undefined ? undefined : Number(values.fleet);
if (fleetSize !== undefined && !(Number.isInteger(fleetSize) && fleetSize >= 2 && fleetSize <= 5)) {
  console.error(`chaos: --fleet must be 2 to 5 members, not "${values.fleet}"`);
  process.exit(2);
}
const storeKind = values.store ?? (fleetSize === undefined ? 'sqlite' : 'postgres');
if (storeKind !== 'sqlite' && storeKind !== 'postgres') {
  console.error(`chaos: --store must be sqlite or postgres, not "${storeKind}"`);
  process.exit(2);
}
const onPg = storeKind === 'postgres';
if (fleetSize !== undefined && !onPg) {
  console.error(
    'chaos: --fleet needs the PostgreSQL store (--store postgres, the default with it)',
  );
  process.exit(2);
}
const kind = fleetSize !== undefined ? '-fleet' : onPg ? '-postgres' : '';
if (onPg && pgBinDir() === undefined) {
  console.error(
    'chaos: --store postgres needs PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql, or set PG_BIN)',
  );
  process.exit(1);
}
const flags = [
  ...(smoke ? ['--smoke'] : []),
  ...(values.seed === undefined ? [] : ['--seed', String(seed)]),
  ...(onPg && fleetSize === undefined ? ['--store', 'postgres'] : []),
  ...(fleetSize === undefined ? [] : ['--fleet', String(fleetSize)]),
];
const command = `npm run chaos${flags.length === 0 ? '' : ` -- ${flags.join(' ')}`}`;
/** docs/reliability.md: the SQLite run's record, and the other runs' summaries (reliability-blocks.ts). */
const mainDoc = fileURLToPath(new URL('../docs/reliability.md', import.meta.url));
const readOr = (path: string): string => (existsSync(path) ? readFileSync(path, 'utf8') : '');
const docPath = smoke
  ? join(tmpdir(), `ledgerbot-reliability${kind}-smoke.md`)
  : fileURLToPath(new URL(`../docs/reliability${kind}.md`, import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-chaos-'));
const random = new SeededRandom(seed);
const t0 = performance.now();
const secs = (): number => (performance.now() - t0) / 1000;
const timeline: TimelineEntry[] = [];
const note = (what: string): void => {
  const entry = { t: secs(), what };
  timeline.push(entry);
  console.log(`chaos: ${entry.t.toFixed(1).padStart(6)} s  ${what}`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

console.log(
  `chaos: ${plan.name} run on ${storeKind}${fleetSize === undefined ? '' : `, a fleet of ${fleetSize}`}, seed ${seed}, work directory ${dir}`,
);
const ledger = await startChaosLedger(dir, seed);
note(`sandbox up at ${ledger.url}`);
let pgServer: PgServer | undefined;
let pgUrl: string | undefined;
if (onPg) {
  pgServer = await startPgServer();
  pgUrl = await pgServer.freshDatabase('chaos');
  note(
    `PostgreSQL up on 127.0.0.1:${pgServer.port} (${fleetSize === undefined ? 'a schema per replica' : `one schema for the fleet, leases of ${CHAOS_LEASE_MS} ms`})`,
  );
}
const pgOf = (name: string): { url: string; schema: string } | undefined =>
  pgUrl === undefined
    ? undefined
    : { url: pgUrl, schema: fleetSize === undefined ? `chaos_${name}` : FLEET_SCHEMA };

const rulesDir = join(dir, 'rules');
writeRules(rulesDir);
const replica = (name: string): ChaosBot => {
  const postgres = pgOf(name);
  return new ChaosBot(name, dir, ledger, {
    rulesDir,
    ...(postgres === undefined ? {} : { postgres }),
    ...(fleetSize === undefined ? {} : { extra: fleetConfigLine() }),
  });
};
const bots = Array.from({ length: fleetSize ?? 2 }, (_, k) => replica('abcde'[k]!));
// The last replica joins halfway (the replica pair's second; the fleet's member that rebalances).
const late = bots.at(-1)!;
let fleetPause: FleetPause | undefined;
let ownership: RuleOwnership[] = [];
// Starts wait while the store's server is down (a supervisor's restart would fail and retry).
let storeUp: Promise<void> = Promise.resolve();
let storeCrash: StoreCrash | undefined;
const botA = bots[0]!;
let failed = false;

try {
  for (const b of bots.slice(0, -1)) b.start();
  for (const b of bots.slice(0, -1)) {
    if (!(await b.ready(30_000))) throw new Error(`replica ${b.name} did not become ready in 30 s`);
    note(`replica ${b.name} ready`);
  }

  const commands = invoicePlan(plan.events + plan.rejected, plan.rejected, random);
  const rejected = new Set(
    commands
      .flatMap((c) => c.invoices)
      .filter((i) => i.currency === REJECTED_CURRENCY)
      .map((i) => i.reference),
  );
  const references = commands.flatMap((c) => c.invoices.map((i) => i.reference));
  const total = references.length;
  const kills = killPoints(plan.kills, random);
  const anchor = await ledger.ledgerEnd();

  await setFaults(ledger, plan.faults);
  note(`faults on: ${JSON.stringify(plan.faults)}`);

  // Milestones fire once the driver has issued that share of the invoices. Each runs on its own
  // so the driver never waits for a kill or a start-up.
  type Milestone = { at: number; run: () => Promise<void> };
  const pending: Promise<void>[] = [];
  const milestones: Milestone[] = [
    ...kills.map((at) => ({
      at,
      run: async (): Promise<void> => {
        // A kill due while the store's server is down waits for the supervisor's restarts.
        await storeUp;
        const alive = await candidates();
        const victim = alive[Math.floor(random.next() * alive.length)];
        if (victim === undefined) return;
        const downMs = 500 + Math.floor(random.next() * 2500);
        await victim.kill();
        note(`SIGKILL replica ${victim.name} (restart in ${downMs} ms)`);
        await sleep(downMs);
        await storeUp;
        victim.start();
        note(`replica ${victim.name} restarted (process ${victim.processes})`);
      },
    })),
    {
      at: plan.secondReplicaAt,
      run: async (): Promise<void> => {
        await storeUp;
        late.start();
        note(
          fleetSize === undefined
            ? `replica ${late.name} started (start: checkpoint, so at the ledger end)`
            : `replica ${late.name} joins the fleet`,
        );
        if (await late.ready(30_000)) note(`replica ${late.name} ready`);
      },
    },
    {
      at: plan.reloadAt,
      run: async (): Promise<void> => {
        editRules(rulesDir);
        note('rule file edited (a rule added): the watchers reload');
        await sleep(2000);
        if ((await botA.ready(30_000)) && botA.hup()) note('SIGHUP to replica a');
        else note('no SIGHUP: replica a was not up');
      },
    },
    ...(pgServer === undefined
      ? []
      : [
          {
            at: storeCrashPoint(random),
            run: () => (fleetSize === undefined ? crashStore(pgServer) : pauseOwner()),
          },
        ]),
  ].sort((x, y) => x.at - y.at);

  /** Who a kill or a pause may hit: live replicas; in a fleet, those owning rules if any. */
  async function candidates(): Promise<ChaosBot[]> {
    const alive = bots.filter((b) => b.running);
    if (fleetSize === undefined) return alive;
    const owning: ChaosBot[] = [];
    for (const b of alive) if (((await b.fleetStatus())?.running.length ?? 0) > 0) owning.push(b);
    return owning.length > 0 ? owning : alive;
  }

  /**
   * A fleet member that owns rules is SIGSTOPped for 2.5 lease periods (the others take its rules
   * over), then SIGCONTed: it wakes up holding leases that are gone and must not write with them.
   */
  async function pauseOwner(): Promise<void> {
    const owners = await candidates();
    const victim = owners[Math.floor(random.next() * owners.length)];
    if (victim === undefined) return;
    const pausedMs = Math.round(2.5 * CHAOS_LEASE_MS);
    const rules = (await victim.fleetStatus())?.running ?? [];
    if (!victim.pause()) return;
    note(
      `SIGSTOP replica ${victim.name} (owning ${rules.join(', ') || 'nothing'}) for ${pausedMs} ms`,
    );
    await sleep(pausedMs);
    victim.resume();
    note(`SIGCONT replica ${victim.name}`);
    const fenced = await victim.fencedSincePause(15_000);
    note(
      fenced
        ? `replica ${victim.name} says it lost its rules or was fenced`
        : `replica ${victim.name} said nothing of its lost leases in 15 s`,
    );
    fleetPause = { replica: victim.name, pausedMs, rules, fenced };
  }

  /**
   * The store's server crashes (`pg_ctl stop -m immediate`) and comes back after a seeded 1–3 s.
   * Every replica running then must stop on its failed commit (the bot fails its store rather
   * than go on without it); the supervisor here restarts each one that stopped, once the server
   * is back, as systemd or Kubernetes would.
   */
  async function crashStore(server: PgServer): Promise<void> {
    const downMs = 1000 + Math.floor(random.next() * 2000);
    const running = bots.filter((b) => b.running);
    const stops = running.map((b) => b.expectStoreOutage(downMs + 30_000));
    let up: () => void = () => undefined;
    storeUp = new Promise((r) => (up = r));
    server.stop('immediate');
    note(`PostgreSQL crashed (pg_ctl stop -m immediate; back in ${downMs} ms)`);
    await sleep(downMs);
    server.start();
    note('PostgreSQL started again');
    const stopped = await Promise.all(stops);
    for (const [k, b] of running.entries()) {
      if (!stopped[k]!) continue;
      b.start();
      note(
        `replica ${b.name} stopped by itself during the crash; restarted (process ${b.processes})`,
      );
    }
    up();
    storeCrash = {
      downMs,
      replicas: running.map((b, k) => ({ name: b.name, stopped: stopped[k]! })),
    };
  }

  const scrapeLoop = setInterval(() => {
    for (const b of bots) void b.scrape();
  }, 1000);

  const driver: DriverStats = { outcomes: new Map(), commands: 0, retries: 0 };
  let issued = 0;
  let next = 0;
  const driveStart = performance.now();
  note(
    `driving ${total} invoices (${plan.rejected} in ${REJECTED_CURRENCY}) at ${plan.perSecond}/s`,
  );
  const fire = (): void => {
    while (milestones.length > 0 && issued / total >= milestones[0]!.at) {
      pending.push(milestones.shift()!.run());
    }
  };
  const worker = async (): Promise<void> => {
    for (;;) {
      const k = next++;
      const c = commands[k];
      if (c === undefined) return;
      // Paced by the invoices issued before this command, so the run lasts what the plan says.
      const before = commands.slice(0, k).reduce((n, x) => n + x.invoices.length, 0);
      const due = driveStart + (before / plan.perSecond) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      await driveCommand(ledger, c, anchor, driver);
      issued += c.invoices.length;
      fire();
    }
  };
  await Promise.all(Array.from({ length: plan.driverConcurrency }, worker));
  fire();
  await Promise.all(pending);
  const driveSeconds = (performance.now() - driveStart) / 1000;
  note(`driver done: ${driver.commands} commands, ${driver.retries} retries`);

  // Settled: the ledger holds one Effect per expected invoice, and every replica that runs has
  // no open intent and has read past the newest invoice (its processed offset need not reach the
  // ledger end: the Effects after it match no filter). Checked while the faults are still on.
  const drainStart = performance.now();
  let settled = false;
  while (!settled && performance.now() - drainStart < plan.drainMs) {
    await sleep(1000);
    // A read the faults break is simply tried again next round.
    const v = await ledgerVerdict(ledger, references, rejected).catch(() => undefined);
    if (v === undefined || v.effects < plan.events || v.closed < plan.events) continue;
    if (fleetSize !== undefined) {
      // A member that owns no rule reads no stream: the shared journal says what is open.
      settled = (await openIntents(pgUrl!).catch(() => 1)) === 0;
      continue;
    }
    const gauges = await Promise.all(bots.filter((b) => b.running).map((b) => b.scrape()));
    settled = gauges.every(
      (g) => g !== undefined && g.open === 0 && (g.processedOffset ?? 0) >= v.lastInvoiceOffset,
    );
  }
  if (fleetSize !== undefined) {
    // Ownership after the last kill, pause or join may still be moving: wait (bounded) for
    // every rule to be run by one live member holding its lease, and report what was seen last.
    const rules = [EFFECT_RULE_ID, CLOSE_RULE_ID, RELOADED_RULE_ID];
    const until = performance.now() + 10 * CHAOS_LEASE_MS;
    for (;;) {
      ownership = await ruleOwnership(bots, pgUrl!, rules);
      const one = ownership.every((o) => o.runners.length === 1 && o.leaseOwner === o.runners[0]);
      if (one || performance.now() > until) break;
      await sleep(500);
    }
    note(
      `owners at the end: ${ownership.map((o) => `${o.ruleId} ${o.runners.join('+') || 'nobody'} (lease ${o.leaseOwner})`).join(', ')}`,
    );
  }
  const drainSeconds = (performance.now() - drainStart) / 1000;
  note(settled ? 'settled' : `not settled after ${plan.drainMs / 1000} s`);
  clearInterval(scrapeLoop);
  await clearFaults(ledger);
  note('faults off');

  const stopCodes: Record<string, number | null> = {};
  const rulesAtEnd: Record<string, readonly string[]> = {};
  for (const b of bots) {
    if (!b.running) continue;
    rulesAtEnd[b.name] = (await b.scrape())?.rules ?? [];
    stopCodes[b.name] = await b.stop();
  }
  note(`replicas stopped (SIGTERM): ${JSON.stringify(stopCodes)}`);
  const faultsInjected = await faultStats(ledger);
  const ledgerResult = await ledgerVerdict(ledger, references, rejected);
  const landed = await ledgerLanded(ledger);
  const stores: StoreVerdict[] = [];
  if (fleetSize !== undefined) {
    const journal = await readPgJournal(pgUrl!, FLEET_SCHEMA);
    stores.push(storeVerdict('fleet', journal, rejected, true, landed));
  }
  for (const b of bots.filter((x) => x.processes > 0 && fleetSize === undefined)) {
    const pgStore = pgOf(b.name);
    const journal =
      pgStore === undefined
        ? readSqliteJournal(b.stateDir)
        : await readPgJournal(pgStore.url, pgStore.schema);
    stores.push(storeVerdict(b.name, journal, rejected, b === botA, landed));
  }

  note('bad input');
  const badInput = await runBadInput(ledger, join(dir, 'bad-input'));
  note('bad input done');

  const result: ChaosResult = {
    plan,
    seed,
    command,
    store: storeKind,
    ...(pgServer === undefined || fleetSize !== undefined
      ? {}
      : { storeCrash: storeCrash ?? null }),
    ...(fleetSize === undefined
      ? {}
      : {
          fleet: {
            members: fleetSize,
            leasePeriodMs: CHAOS_LEASE_MS,
            pause: fleetPause ?? null,
            ownership,
          },
        }),
    dir,
    total,
    settled,
    driveSeconds,
    drainSeconds,
    totalSeconds: secs(),
    timeline,
    driver,
    faults: faultsInjected,
    bots: bots.map((b) => ({
      name: b.name,
      processes: b.processes,
      counters: b.totals(),
      unexpectedExits: b.unexpectedExits,
      outageExits: b.outageExits,
      stopCode: stopCodes[b.name],
      rulesAtEnd: rulesAtEnd[b.name] ?? [],
    })),
    ledger: ledgerResult,
    stores,
    badInput,
    badInputFailures: badInputFailures(badInput),
  };
  const { text, failures, checks } = renderReliability(result);
  writeFileSync(docPath, kind === '' && !smoke ? keepBlocks(readOr(docPath), text) : text);
  if (kind !== '' && !smoke) {
    const record = `reliability${kind}.md`;
    const summary = summaryBlock({
      title: fleetSize === undefined ? 'On PostgreSQL' : `A fleet of ${fleetSize} on PostgreSQL`,
      command,
      recordFile: record,
      machine: machineLine(),
      seed,
      failures,
      checks,
    });
    writeFileSync(mainDoc, spliceBlock(readOr(mainDoc), kind.slice(1), summary));
  }
  console.log(text);
  console.log(`chaos: wrote ${docPath}`);
  if (failures.length > 0) {
    failed = true;
    console.error(`chaos: FAILED\n  ${failures.join('\n  ')}`);
  } else {
    console.log('chaos: every check passed');
  }
} catch (err) {
  failed = true;
  console.error(`chaos: the run broke off: ${(err as Error).stack ?? String(err)}`);
} finally {
  for (const b of bots) await b.stop(5000).catch(() => undefined);
  await ledger.close();
  pgServer?.close();
}
// The work directory (bot logs, configs, state) is kept when the run failed, for the post-mortem.
if (failed || values.keep === true) console.log(`chaos: the bot logs and stores are in ${dir}`);
else rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
