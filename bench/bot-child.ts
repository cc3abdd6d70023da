import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The real bot as a child process (`node bin/ledgerbot.js run --config …`), as users run it,
 * with a generated config in a fresh temporary directory. Its JSON log lines are handed to
 * `onLog` (only those whose text contains one of `messages`, to keep parsing cheap).
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));

export type BotConfigOptions = {
  readonly url: string;
  readonly userId: string;
  readonly parties: Readonly<Record<string, string>>;
  /** Rule files: name → YAML text, written to `<dir>/rules/`. */
  readonly rules: Readonly<Record<string, string>>;
  readonly start: number | 'ledger-end';
  readonly maxInFlight: number;
  /** Serve /readyz and /metrics on 127.0.0.1: on a free port (true), or on this one. */
  readonly http?: boolean | number;
  readonly logLevel?: string;
  /** The journal in this PostgreSQL database and schema instead of `state/ledgerbot.sqlite`. */
  readonly postgres?: { readonly url: string; readonly schema: string };
  /** A fleet member (with `postgres`): the fleet's name and lease period. */
  readonly fleet?: { readonly name: string; readonly leasePeriodMs: number };
};

/** Writes the config and the rule files into a new temporary directory; returns the config path. */
export function writeBotConfig(o: BotConfigOptions): string {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-bench-'));
  mkdirSync(join(dir, 'rules'));
  for (const [name, text] of Object.entries(o.rules)) writeFileSync(join(dir, 'rules', name), text);
  const parties = Object.entries(o.parties)
    .map(([alias, id]) => `  ${alias}: '${id}'`)
    .join('\n');
  const config = `ledger:
  url: ${o.url}
  userId: ${o.userId}
parties:
${parties}
rules: rules/
state:
  dir: state
${o.postgres === undefined ? '' : `  postgres:\n    url: ${o.postgres.url}\n    schema: ${o.postgres.schema}\n`}start: ${o.start}
submission:
  maxInFlight: ${o.maxInFlight}
${o.fleet === undefined ? '' : `fleet:\n  name: ${o.fleet.name}\n  leasePeriod: ${o.fleet.leasePeriodMs}ms\n`}${o.http === undefined || o.http === false ? '' : `http:\n  port: ${o.http === true ? 0 : o.http}\n  host: 127.0.0.1\n`}log:
  level: ${o.logLevel ?? 'info'}
  pretty: false
`;
  const file = join(dir, 'bot.config.yaml');
  writeFileSync(file, config);
  return file;
}

/**
 * Removes the directory `writeBotConfig` made for `configFile`, with the bot's state in it (its
 * journal reaches 90–170 MB in the e2e runs): once its bot has stopped, so a bench leaves nothing
 * in the temporary directory.
 */
export function removeBotConfig(configFile: string): void {
  rmSync(dirname(configFile), { recursive: true, force: true });
}

export type LogLine = { readonly msg: string; readonly time: string } & Record<string, unknown>;

export type BotChild = {
  readonly child: ChildProcess;
  readonly spawnedAt: number;
  /** Resolves with the ops server URL (configs with `http`); rejects when the bot exits first. */
  readonly opsUrl: Promise<string>;
  /** Sends SIGTERM and waits for the exit (the bot saves its checkpoint first). */
  stop(): Promise<number | null>;
};

export function spawnBot(
  configFile: string,
  options: {
    readonly nodeArgs?: readonly string[];
    readonly messages?: readonly string[];
    readonly onLog?: (line: LogLine) => void;
  } = {},
): BotChild {
  const spawnedAt = performance.now();
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), 'bin/ledgerbot.js', 'run', '--config', configFile],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const messages = ['ops server listening', ...(options.messages ?? [])];
  let resolveOps: (url: string) => void = () => undefined;
  let rejectOps: (err: Error) => void = () => undefined;
  const opsUrl = new Promise<string>((resolve, reject) => {
    resolveOps = resolve;
    rejectOps = reject;
  });
  // Not every caller waits for the ops server (configs without `http`).
  opsUrl.catch(() => undefined);
  const exited = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      // A bot that exits before its ops server listens (a config or package error) fails the
      // bench at once instead of leaving it waiting for a URL that never comes.
      rejectOps(new Error(`the bot exited (code ${String(code)}) before its ops server listened`));
      r(code);
    }),
  );
  createInterface({ input: child.stdout }).on('line', (text) => {
    if (!messages.some((m) => text.includes(m))) return;
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      return;
    }
    if (line.msg === 'ops server listening') resolveOps(String(line.url));
    options.onLog?.(line);
  });
  return {
    child,
    spawnedAt,
    opsUrl,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Waits for `predicate`, polling every `everyMs`, for at most `maxMs`; false on timeout. */
export async function waitFor(
  predicate: () => boolean,
  maxMs: number,
  everyMs = 5,
): Promise<boolean> {
  const deadline = performance.now() + maxMs;
  while (!predicate()) {
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return true;
}
