import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsTransaction } from '../src/ledger/wire/wire-types.js';
import { removeBotConfig, spawnBot, waitFor, writeBotConfig, type LogLine } from './bot-child.js';
import { pgBinDir, startPgServer, type PgServer } from './pg-server.js';
import { commandCpu, cpuSample, type CommandCpu, type CpuSample } from './command-cpu.js';
import { mainThreadProfile, profileSummary, type ProfileSummary } from './cpu-profile-summary.js';
import { fleetRun, type TakeOver } from './e2e-fleet.js';
import {
  createPaced,
  halfOf,
  invoiceFormat,
  percentiles,
  rawRun,
  type Latency,
  type Paced,
} from './e2e-raw.js';
import {
  createInvoices,
  INVOICE,
  ledgerEnd,
  readAll,
  startInvoiceLedger,
  type InvoiceLedger,
} from './invoice-ledger.js';

/**
 * End to end vs raw capacity. Each run gets a fresh sandbox process, creates N invoices (64 at a
 * time), then lets one client cancel every one of them (one ExerciseCommand per invoice, async
 * submit, completion awaited, at most IN_FLIGHT outstanding):
 *  - bot: `node bin/ledgerbot.js run` with one rule (created Invoice → exercise Cancel),
 *    `start:` the offset before the invoices; done when its log has N `succeeded` intents;
 *  - raw: a hand-written client in this process: the same update stream, the same exercise for
 *    each created contract, no rules, no journal; done when N completions came back.
 * After the bot's backlog, a paced phase measures its latency: invoices created one at a time at
 * a fixed rate while the bot runs live; event time = the transaction's recordTime (from the
 * update stream), completion time = the `time` of the bot's `intent finished` log line (written
 * as the intent succeeds; millisecond resolution), submit time = that minus the line's
 * `recordToCompletionMs` plus its `recordToSubmitMs` (the bot's clock, milliseconds). The raw
 * client's first round has the same paced phase after its backlog (its own clock at the submit
 * call and at the completion frame), as the floor the sandbox and the machine give.
 *
 * The bot runs twice per round: on its SQLite journal (`bot`) and on a PostgreSQL journal
 * (`bot-pg`: one instance, a fresh database per run on a server the bench starts, fsync off as
 * SQLite's WAL with synchronous=NORMAL: a crashed process loses no commit, a power cut may).
 * Without PostgreSQL server binaries the `bot-pg` runs are skipped outside CI (in CI they fail).
 */
export const IN_FLIGHT = 64;

export type { Latency } from './e2e-raw.js';

export type E2eRun = {
  /**
   * `bot`: the bot on its SQLite journal; `bot-pg`: on PostgreSQL; `fleet-3`: three fleet
   * members on one PostgreSQL schema (bench/e2e-fleet.ts).
   */
  readonly client: 'bot' | 'bot-pg' | 'fleet-3' | 'raw';
  readonly round: number;
  readonly n: number;
  /** Seconds from start (bot: spawn; raw: opening the streams) to the last completion. */
  readonly wallSeconds: number;
  /** Seconds from the first submission to the last completion. */
  readonly submitSeconds: number;
  /** CPU time per command (see `CommandCpu`); absent for fleet-3, without /proc, in older results. */
  readonly cpu?: CommandCpu;
  /**
   * The second half of the commands alone (from the ⌈N/2⌉-th completion to the last): its seconds
   * and CPU per command (see the section's note on what differs between the halves). Absent for
   * fleet-3 and in older results.
   */
  readonly secondHalf?: { readonly seconds: number; readonly cpu?: CommandCpu };
};

export type E2eResult = {
  readonly runs: readonly E2eRun[];
  readonly latency: {
    readonly count: number;
    readonly ratePerSecond: number;
    readonly toSubmit: Latency;
    readonly toCompletion: Latency;
    /**
     * The raw client's, in the same kind of paced phase after its own backlog (round 1): what the
     * sandbox and the machine give a client that keeps no books. Absent in results saved before.
     */
    readonly raw?: {
      readonly count: number;
      readonly toSubmit: Latency;
      readonly toCompletion: Latency;
    };
  };
  /**
   * The `bot-pg` runs: why they were skipped, or the latency of its paced phase (round 1). Absent
   * in results saved before the PostgreSQL store.
   */
  readonly postgres?:
    | { readonly skipped: string }
    | {
        readonly latency: {
          readonly count: number;
          readonly toSubmit: Latency;
          readonly toCompletion: Latency;
        };
        /** The fleet's lease take-over after a SIGKILL (round 1); absent in older results. */
        readonly takeover?: TakeOver;
      };
  /** The bot under `node --cpu-prof` (one more, untimed run of `profileN` invoices). */
  readonly profile: ProfileSummary | undefined;
  readonly profileN: number | undefined;
};

const RULE = `version: 1
rules:
  - id: cancel-invoices
    on: { created: '${INVOICE}', party: issuer }
    then:
      - exercise:
          template: '${INVOICE}'
          contractId: '\${{ event.contractId }}'
          choice: Cancel
        actAs: [issuer]
    concurrency: ${IN_FLIGHT}
    rateLimit: { perSecond: 1000000, burst: 1000000 }
`;

/** recordTime (ms) of every transaction in (begin, end], by offset. */
async function recordTimes(l: InvoiceLedger, begin: number): Promise<Map<number, number>> {
  const frames = await readAll(l.url, '/v2/updates', {
    beginExclusive: begin,
    endInclusive: await ledgerEnd(l.url),
    updateFormat: invoiceFormat(l),
  });
  const times = new Map<number, number>();
  for (const f of frames) {
    const tx = (JSON.parse(f) as { update: { Transaction?: { value: JsTransaction } } }).update
      .Transaction?.value;
    if (tx !== undefined) times.set(tx.offset, Date.parse(tx.recordTime));
  }
  return times;
}

type IntentTimes = { offset: number; submitted: number; succeeded: number };

async function botRun(
  round: number,
  n: number,
  paced: Paced | undefined,
  nodeArgs: readonly string[] = [],
  pg?: PgServer,
): Promise<{ run: E2eRun; latency?: E2eResult['latency'] }> {
  const l = await startInvoiceLedger();
  try {
    const begin = await ledgerEnd(l.url);
    await createInvoices(l, `bot${round}`, n);
    const postgres =
      pg === undefined ? undefined : { url: await pg.freshDatabase('e2e'), schema: 'ledgerbot' };
    const config = writeBotConfig({
      ...(postgres === undefined ? {} : { postgres }),
      url: l.url,
      userId: l.userId,
      parties: { issuer: l.issuer, payer: l.payer },
      rules: { 'cancel.yaml': RULE },
      start: begin,
      maxInFlight: IN_FLIGHT,
    });
    const intents = new Map<string, IntentTimes>();
    let succeeded = 0;
    let failed = 0;
    let cpuFrom: CpuSample | undefined;
    let cpuHalf: CpuSample | undefined;
    let halfAt = 0;
    let cpuTo: CpuSample | undefined;
    const bot = spawnBot(config, {
      nodeArgs,
      // At info the bot logs one line per finished intent, and every failure.
      messages: ['intent finished', 'intent state changed'],
      onLog: (line: LogLine) => {
        if (line.msg !== 'intent finished' || line.state !== 'succeeded') {
          if (line.state !== 'pending') failed++; // a retry after an error is not final
          return;
        }
        const at = Date.parse(line.time);
        const toCompletion = Number(line.recordToCompletionMs);
        const toSubmit = Number(line.recordToSubmitMs);
        intents.set(String(line.commandId), {
          offset: Number(line.offset),
          submitted: at - toCompletion + toSubmit,
          succeeded: at,
        });
        succeeded++;
        if (succeeded === 1) cpuFrom = cpuSample(bot.child.pid, l.child.pid);
        if (succeeded === halfOf(n)) {
          // One process writes the lines in order: this line's time is the ⌈N/2⌉-th completion's.
          halfAt = at;
          cpuHalf = cpuSample(bot.child.pid, l.child.pid);
        }
        if (succeeded === n) cpuTo = cpuSample(bot.child.pid, l.child.pid);
      },
    });
    try {
      const done = await waitFor(() => succeeded + failed >= n, 600_000, 2);
      const wallSeconds = (performance.now() - bot.spawnedAt) / 1000;
      if (!done || failed > 0)
        throw new Error(`bot: ${succeeded} of ${n} succeeded, ${failed} failed`);
      const all = [...intents.values()];
      const first = Math.min(...all.map((t) => t.submitted));
      const last = Math.max(...all.map((t) => t.succeeded));
      const halfCpu = commandCpu(cpuHalf, cpuTo, n - halfOf(n));
      let run: E2eRun = {
        client: pg === undefined ? 'bot' : 'bot-pg',
        round,
        n,
        wallSeconds,
        submitSeconds: (last - first) / 1000,
        secondHalf: {
          seconds: (last - halfAt) / 1000,
          ...(halfCpu === undefined ? {} : { cpu: halfCpu }),
        },
      };
      const cpu = commandCpu(cpuFrom, cpuTo, n - 1);
      if (cpu !== undefined) run = { ...run, cpu };
      if (paced === undefined) return { run };

      const pacedBegin = await ledgerEnd(l.url);
      const before = new Set(intents.keys());
      await createPaced(l, paced, `paced${round}`);
      if (!(await waitFor(() => succeeded >= n + paced.count, 60_000, 2))) {
        throw new Error(`bot: ${succeeded - n} of ${paced.count} paced intents succeeded`);
      }
      const times = await recordTimes(l, pacedBegin);
      const toSubmit: number[] = [];
      const toCompletion: number[] = [];
      for (const [id, t] of intents) {
        if (before.has(id)) continue;
        const at = times.get(t.offset);
        if (at === undefined || !Number.isFinite(t.submitted)) continue;
        toSubmit.push(t.submitted - at);
        toCompletion.push(t.succeeded - at);
      }
      return {
        run,
        latency: {
          count: toSubmit.length,
          ratePerSecond: paced.perSecond,
          toSubmit: percentiles(toSubmit),
          toCompletion: percentiles(toCompletion),
        },
      };
    } finally {
      await bot.stop();
      removeBotConfig(config);
    }
  } finally {
    await l.close();
  }
}

const inCi = process.env.CI !== undefined && process.env.CI !== '';
const NO_POSTGRES =
  'no PostgreSQL (no server binaries under /usr/lib/postgresql; apt-get install postgresql, or set PG_BIN)';

export async function runE2eBench(options: {
  readonly n: number;
  readonly rounds: number;
  readonly paced: Paced;
  /** Also run the bot once more under `node --cpu-prof` (not timed) and summarise it. */
  readonly profileN?: number;
}): Promise<E2eResult> {
  const runs: E2eRun[] = [];
  let latency: E2eResult['latency'] | undefined;
  let rawLatency: E2eResult['latency']['raw'];
  let pgLatency: E2eResult['latency']['raw'];
  let takeover: TakeOver | undefined;
  const skipped = pgBinDir() === undefined && !inCi ? NO_POSTGRES : undefined;
  if (skipped !== undefined) console.log(`e2e bot-pg: skipped: ${skipped}`);
  const pg = skipped === undefined ? await startPgServer() : undefined;
  const clients: E2eRun['client'][] =
    pg === undefined ? ['bot', 'raw'] : ['bot', 'bot-pg', 'fleet-3', 'raw'];
  try {
    for (let round = 0; round < options.rounds; round++) {
      // Rotate the order, so no client always runs first (or right after another).
      const order = clients.map((_, i) => clients[(i + round) % clients.length]!);
      for (const client of order) {
        if (client === 'raw') {
          const paced = round === 0 ? options.paced : undefined;
          const r = await rawRun(round, options.n, paced, IN_FLIGHT);
          runs.push(r.run);
          rawLatency ??= r.latency;
        } else if (client === 'fleet-3') {
          const { takeover: t, ...r } = await fleetRun(
            round,
            options.n,
            IN_FLIGHT,
            pg!,
            takeover === undefined,
          );
          runs.push({ client, round, ...r });
          takeover ??= t;
          if (t !== undefined) {
            console.log(
              `e2e fleet-3 take-over (lease ${t.leasePeriodMs} ms): lease taken ${t.leaseTakenMs ?? '—'} ms, work resumed ${t.workResumedMs ?? '—'} ms after the SIGKILL`,
            );
          }
        } else if (client === 'bot-pg') {
          const paced = pgLatency === undefined ? options.paced : undefined;
          const r = await botRun(round, options.n, paced, [], pg);
          runs.push(r.run);
          pgLatency ??= r.latency;
        } else {
          const paced = latency === undefined ? options.paced : undefined;
          const r = await botRun(round, options.n, paced);
          runs.push(r.run);
          latency ??= r.latency;
        }
        const last = runs[runs.length - 1]!;
        console.log(
          `e2e ${last.client} round ${round}: ${last.n} in ${last.wallSeconds.toFixed(2)} s (${Math.round(last.n / last.submitSeconds)}/s first submit → last completion)`,
        );
      }
    }
  } finally {
    pg?.close();
  }
  let profile: ProfileSummary | undefined;
  if (options.profileN !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-prof-'));
    try {
      await botRun(99, options.profileN, undefined, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      const file = mainThreadProfile(dir);
      if (file !== undefined) profile = profileSummary(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return {
    runs,
    latency: { ...latency!, ...(rawLatency === undefined ? {} : { raw: rawLatency }) },
    postgres:
      skipped !== undefined
        ? { skipped }
        : { latency: pgLatency!, ...(takeover === undefined ? {} : { takeover }) },
    profile,
    profileN: options.profileN,
  };
}
