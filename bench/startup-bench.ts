import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchRules } from './bench-rules.js';
import { spawnBot, waitFor, writeBotConfig } from './bot-child.js';
import { profileSummary, type ProfileSummary } from './cpu-profile-summary.js';
import { startInvoiceLedger } from './invoice-ledger.js';

/**
 * Start-up: from spawning `node bin/ledgerbot.js run --config …` with 1,000 rules (ten generated
 * files of 100 bench rules) against the sandbox (its own process, empty ledger, `start:
 * ledger-end`, a fresh state directory each time) until GET /readyz answers 200: the bot is
 * running, its updates stream is connected and it is within `readyMaxLag` of the ledger end.
 * /readyz is polled every 5 ms once the ops server has logged its address. The floor is the time
 * to spawn `node -e 0` and see it exit, measured alternately in the same run.
 */
export type StartupResult = {
  readonly rules: number;
  readonly runs: number;
  readonly readyMs: readonly number[];
  readonly floorMs: readonly number[];
  /** Spawn to the `bot starting` log line (rules loaded, store open, streams about to open). */
  readonly startingMs: readonly number[];
  /** One more (untimed) start under `node --cpu-prof`. */
  readonly profile: ProfileSummary | undefined;
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
    files[`rules-${f}.yaml`] = benchRules(100, 'ledger-effects', `file${f}`);
  }
  const readyMs: number[] = [];
  const floorMs: number[] = [];
  const startingMs: number[] = [];
  try {
    await nodeFloor(); // warm the file cache for node itself
    const profileDir = mkdtempSync(join(tmpdir(), 'ledgerbot-prof-'));
    const total = options.runs + (options.profile === true ? 1 : 0);
    for (let run = 0; run < total; run++) {
      const profiled = run === options.runs;
      if (!profiled) floorMs.push(await nodeFloor());
      const config = writeBotConfig({
        url: l.url,
        userId: l.userId,
        parties: { issuer: l.issuer, payer: l.payer },
        rules: files,
        start: 'ledger-end',
        maxInFlight: 64,
        http: true,
      });
      let starting: number | undefined;
      const bot = spawnBot(config, {
        nodeArgs: profiled ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
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
        if (profiled) continue;
        readyMs.push(performance.now() - bot.spawnedAt);
        await waitFor(() => starting !== undefined, 1_000);
        startingMs.push((starting ?? NaN) - bot.spawnedAt);
      } finally {
        await bot.stop();
      }
    }
    const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    const profile = file === undefined ? undefined : profileSummary(join(profileDir, file));
    rmSync(profileDir, { recursive: true, force: true });
    return { rules: options.rules, runs: options.runs, readyMs, floorMs, startingMs, profile };
  } finally {
    await l.close();
  }
}
