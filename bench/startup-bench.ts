import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchRules } from './bench-rules.js';
import { removeBotConfig, spawnBot, waitFor, writeBotConfig } from './bot-child.js';
import { cpuMsOf } from './cpu-ms-of.js';
import { mainThreadProfile, profileSummary, type ProfileSummary } from './cpu-profile-summary.js';
import { startInvoiceLedger } from './invoice-ledger.js';

/**
 * Start-up: from spawning `node bin/ledgerbot.js run --config …` with 1,000 rules (ten generated
 * files of 100 bench rules, each file with its own thresholds) against the sandbox (its own process, empty ledger, `start:
 * ledger-end`) until GET /readyz answers 200: the bot is running, its updates stream is connected
 * and it is within `readyMaxLag` of the ledger end. Cold: a fresh state directory each time (no
 * rule cache, no package cache). Warm: one state directory a first, untimed start filled, reused
 * by every warm run (its rule cache and package cache are hit). /readyz is polled every 5 ms once
 * the ops server has logged its address. Each run is a floor (the time to spawn `node -e 0` and
 * see it exit), a cold start and a warm start, in turn.
 */
export type StartupResult = {
  readonly rules: number;
  readonly runs: number;
  readonly readyMs: readonly number[];
  readonly floorMs: readonly number[];
  /** Spawn to the `bot starting` log line (rules loaded, store open, streams about to open). */
  readonly startingMs: readonly number[];
  readonly warmReadyMs: readonly number[];
  readonly warmStartingMs: readonly number[];
  /**
   * CPU time (user + system) the bot process had used when /readyz answered 200, from
   * /proc/<pid>/stat (10 ms ticks; empty where there is no /proc): less sensitive than wall
   * time to other work on the machine.
   */
  readonly cpuMs: readonly number[];
  readonly warmCpuMs: readonly number[];
  /** One more (untimed) cold start under `node --cpu-prof`. */
  readonly profile: ProfileSummary | undefined;
  /** One more (untimed) warm start under `node --cpu-prof`. */
  readonly warmProfile: ProfileSummary | undefined;
};

type Start = {
  readonly readyMs: number;
  readonly startingMs: number;
  readonly cpuMs: number | undefined;
};

async function nodeFloor(): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.on('exit', () => resolve());
    child.on('error', reject);
  });
  return performance.now() - started;
}

export async function runStartupBench(options: {
  readonly runs: number;
  readonly rules: number;
  readonly profile?: boolean;
}): Promise<StartupResult> {
  const l = await startInvoiceLedger();
  const files: Record<string, string> = {};
  for (let f = 0; f < options.rules / 100; f++) {
    files[`rules-${f}.yaml`] = benchRules(100, 'ledger-effects', `file${f}`, 100 * f);
  }
  // Every bot of a run stops before its start returns: their directories go at the end.
  const configs: string[] = [];
  const config = (): string => {
    const file = writeBotConfig({
      url: l.url,
      userId: l.userId,
      parties: { issuer: l.issuer, payer: l.payer },
      rules: files,
      start: 'ledger-end',
      maxInFlight: 64,
      http: true,
    });
    configs.push(file);
    return file;
  };
  const readyMs: number[] = [];
  const floorMs: number[] = [];
  const startingMs: number[] = [];
  const warmReadyMs: number[] = [];
  const warmStartingMs: number[] = [];
  const cpuMs: number[] = [];
  const warmCpuMs: number[] = [];
  const profileDir = mkdtempSync(join(tmpdir(), 'ledgerbot-prof-'));
  try {
    await nodeFloor(); // warm the file cache for node itself
    const warmConfig = config();
    await startOnce(warmConfig); // fills the warm state directory
    for (let run = 0; run < options.runs; run++) {
      floorMs.push(await nodeFloor());
      const cold = await startOnce(config());
      readyMs.push(cold.readyMs);
      startingMs.push(cold.startingMs);
      if (cold.cpuMs !== undefined) cpuMs.push(cold.cpuMs);
      const warm = await startOnce(warmConfig);
      warmReadyMs.push(warm.readyMs);
      warmStartingMs.push(warm.startingMs);
      if (warm.cpuMs !== undefined) warmCpuMs.push(warm.cpuMs);
    }
    let profile: ProfileSummary | undefined;
    let warmProfile: ProfileSummary | undefined;
    if (options.profile === true) {
      profile = await profiled(config(), join(profileDir, 'cold'));
      warmProfile = await profiled(warmConfig, join(profileDir, 'warm'));
    }
    return {
      rules: options.rules,
      runs: options.runs,
      readyMs,
      floorMs,
      startingMs,
      warmReadyMs,
      warmStartingMs,
      cpuMs,
      warmCpuMs,
      profile,
      warmProfile,
    };
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
    for (const file of configs) removeBotConfig(file);
    await l.close();
  }
}

/** One start under `node --cpu-prof` (untimed): the summary of its profile. */
async function profiled(configFile: string, dir: string): Promise<ProfileSummary | undefined> {
  mkdirSync(dir, { recursive: true });
  await startOnce(configFile, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const file = mainThreadProfile(dir);
  return file === undefined ? undefined : profileSummary(file);
}

/** Spawns the bot on `configFile`, waits for /readyz 200, stops it: the times it took. */
async function startOnce(configFile: string, nodeArgs: readonly string[] = []): Promise<Start> {
  let starting: number | undefined;
  const bot = spawnBot(configFile, {
    nodeArgs,
    messages: ['bot starting'],
    onLog: (line) => {
      if (line.msg === 'bot starting') starting = performance.now();
    },
  });
  try {
    const opsUrl = await Promise.race([
      bot.opsUrl,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no ops server within 30 s')), 30_000),
      ),
    ]);
    let ready = false;
    const deadline = performance.now() + 30_000;
    while (!ready && performance.now() < deadline) {
      ready = (await fetch(`${opsUrl}/readyz`)).status === 200;
      if (!ready) await new Promise((r) => setTimeout(r, 5));
    }
    if (!ready) throw new Error('/readyz did not answer 200 within 30 s');
    const readyMs = performance.now() - bot.spawnedAt;
    const cpuMs = cpuMsOf(bot.child.pid);
    await waitFor(() => starting !== undefined, 1_000);
    return { readyMs, startingMs: (starting ?? NaN) - bot.spawnedAt, cpuMs };
  } finally {
    await bot.stop();
  }
}
