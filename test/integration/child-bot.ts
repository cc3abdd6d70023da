import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT, RULES_DIR, type TestLedger } from './harness.js';

const ENTRY = join(ROOT, 'dist/cli/run-cli.js');
const RUN_BUNDLE = join(ROOT, 'dist/run/run-cli.js');
const BIN = join(ROOT, 'bin/ledgerbot.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(
      newest,
      entry.isDirectory()
        ? newestMtime(path)
        : entry.name.endsWith('.ts')
          ? statSync(path).mtimeMs
          : 0,
    );
  }
  return newest;
}

/**
 * Child-process tests run `bin/ledgerbot.js`, which loads dist/. Rebuilds it when a source file
 * is newer, and the bundle of `run` (dist/run/) when tsc's output is newer than it; a lock
 * directory keeps test files from building at the same time.
 */
export async function ensureBuilt(): Promise<void> {
  const lock = join(tmpdir(), 'ledgerbot-test-build.lock');
  const until = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A test run killed mid-build leaves the lock behind; no build takes this long.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - since > 180_000) {
        rmdirSync(lock);
        continue;
      }
      if (Date.now() > until) throw new Error(`${lock} is held for too long; remove it`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    const fresh = existsSync(ENTRY) && statSync(ENTRY).mtimeMs >= newestMtime(join(ROOT, 'src'));
    if (!fresh) {
      // tsc writes dist/ even when some file has a type error; what matters is a current entry.
      const r = spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
        {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: 110_000,
        },
      );
      if (!existsSync(ENTRY) || statSync(ENTRY).mtimeMs < Date.now() - 120_000) {
        throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`);
      }
    }
    // The bundle `run` starts from (the second half of `npm run build`): without a current one,
    // bin/ledgerbot.js would run tsc's output, and the tests would not run what users run.
    if (!existsSync(RUN_BUNDLE) || statSync(RUN_BUNDLE).mtimeMs < statSync(ENTRY).mtimeMs) {
      const r = spawnSync(process.execPath, [join(ROOT, 'scripts/bundle-run.mjs')], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 110_000,
      });
      if (r.status !== 0) throw new Error(`bundling run failed:\n${r.stdout}\n${r.stderr}`);
    }
  } finally {
    rmdirSync(lock);
  }
}

export type ChildBotConfig = {
  readonly stateDir: string;
  readonly completionTimeout?: string;
  readonly start?: string;
  /** The rule file or directory (default: the fixture rules). */
  readonly rules?: string;
  /** The journal in this PostgreSQL database and schema instead of `stateDir`'s SQLite file. */
  readonly postgres?: { readonly url: string; readonly schema: string };
};

/** Writes a bot.config.yaml for `ledgerbot run` against the test's sandbox; returns its path. */
export function writeBotConfig(ledger: TestLedger, dir: string, c: ChildBotConfig): string {
  const path = join(dir, 'bot.config.yaml');
  writeFileSync(
    path,
    [
      'ledger:',
      `  url: ${ledger.url}`,
      '  userId: ledgerbot',
      '  auth: { type: none }',
      'parties:',
      `  issuer: '${ledger.parties.issuer}'`,
      `  payer: '${ledger.parties.payer}'`,
      `rules: ['${c.rules ?? RULES_DIR}']`,
      c.postgres === undefined
        ? `state: { dir: '${c.stateDir}' }`
        : `state: { dir: '${c.stateDir}', postgres: { url: '${c.postgres.url}', schema: ${c.postgres.schema} } }`,
      `start: ${c.start ?? 'checkpoint'}`,
      'submission:',
      '  maxInFlight: 32',
      `  completionTimeout: ${c.completionTimeout ?? '5s'}`,
      '  retry: { maxAttempts: 20, initialDelay: 20ms, maxDelay: 200ms, deadline: 2m }',
      // debug: the tests follow every intent state change (info has only the finished ones).
      'log: { level: debug, pretty: false }',
      '',
    ].join('\n'),
  );
  return path;
}

export type LogLine = { msg?: string; level?: number; [field: string]: unknown };

/** `ledgerbot run` in a child process, its JSON log lines parsed as they come. */
export type ChildBot = {
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  /** What was not a JSON line (stderr included). */
  readonly other: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves at the first line `match` accepts; rejects after `timeoutMs` or if the child exits. */
  waitForLine(match: (line: LogLine) => boolean, timeoutMs: number, what: string): Promise<LogLine>;
  /** Kills it (if still running) and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
};

/**
 * `ledgerbot run --config <configPath>`: `bin/ledgerbot.js` (dist/, see `ensureBuilt`), or with
 * `fromSources` the TypeScript sources through tsx (an entry file written beside the config), for
 * a test that should need no build.
 */
export function spawnBot(configPath: string, options: { fromSources?: boolean } = {}): ChildBot {
  let program = [BIN];
  if (options.fromSources === true) {
    const entry = join(dirname(configPath), 'run-entry.mjs');
    writeFileSync(
      entry,
      `const { runCli } = await import(${JSON.stringify(join(ROOT, 'src/cli/run-cli.ts'))});\n` +
        'process.exitCode = await runCli(process.argv.slice(2));\n',
    );
    program = ['--import', 'tsx', entry];
  }
  const child = spawn(process.execPath, [...program, 'run', '--config', configPath], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const other: string[] = [];
  const waiters = new Set<() => void>();
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        other.push(text);
      }
    }
    for (const w of waiters) w();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => other.push(chunk));
  let hasExited = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      hasExited = true;
      for (const w of waiters) w();
      resolve({ code, signal });
    });
  });
  return {
    child,
    lines,
    other,
    exited,
    waitForLine: (match, timeoutMs, what) =>
      new Promise((resolve, reject) => {
        let from = 0;
        const check = (): void => {
          for (; from < lines.length; from++) {
            const line = lines[from]!;
            if (match(line)) {
              done();
              resolve(line);
              return;
            }
          }
          if (hasExited) {
            done();
            reject(new Error(`the bot exited while waiting for ${what}:\n${other.join('\n')}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${other.join('\n')}`),
          );
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    kill: async (signal = 'SIGKILL') => {
      if (!hasExited) child.kill(signal);
      await exited;
    },
  };
}

/** The pino line of an intent state change: `intent finished` for succeeded and duplicate. */
export function isIntentLine(line: LogLine): boolean {
  return line.msg === 'intent state changed' || line.msg === 'intent finished';
}
