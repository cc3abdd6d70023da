import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BOT_USER, type ChaosLedger } from './chaos-ledger.js';

/**
 * The bots of the chaos scenario: `ledgerbot run` child processes, as operators run them. A
 * replica keeps its state directory across kills and restarts; each process (an "instance")
 * logs to its own file, and its /metrics are scraped while it lives, so the counters of a
 * SIGKILLed process are kept up to its last scrape.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));

export const EFFECT_RULE_ID = 'chaos-effect';
/** The consuming rule: closes every Effect (a resubmission after a commit is CONTRACT_NOT_FOUND). */
export const CLOSE_RULE_ID = 'chaos-close';
/** The rule the reload adds: a replica that runs it has taken the edit. */
export const RELOADED_RULE_ID = 'chaos-unrelated';

const EFFECT_RULE = `version: 1
rules:
  - id: ${EFFECT_RULE_ID}
    description: The issuer records one Effect per invoice it issues (a plain create).
    on:
      created: '#invoices:Invoice:Invoice'
      party: issuer
    then:
      - create:
          template: '#chaos:Chaos:Effect'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: '\${{ event.createArgument.reference }}'
            amount: '\${{ event.createArgument.amount }}'
            currency: '\${{ event.createArgument.currency }}'
        actAs: [issuer]
    retry: { maxAttempts: 60, initialDelay: 20ms, maxDelay: 500ms, deadline: 15m }
    rateLimit: { perSecond: 5000, burst: 5000 }
    concurrency: 64
  - id: ${CLOSE_RULE_ID}
    description: The issuer closes every Effect (a consuming exercise, leaving a Closed).
    on:
      created: '#chaos:Chaos:Effect'
      party: issuer
    then:
      - exercise:
          template: '#chaos:Chaos:Effect'
          contractId: '\${{ event.contractId }}'
          choice: Close
        actAs: [issuer]
        workflowId: 'ref:\${{ event.createArgument.reference }}'
    retry: { maxAttempts: 60, initialDelay: 20ms, maxDelay: 500ms, deadline: 15m }
    rateLimit: { perSecond: 5000, burst: 5000 }
    concurrency: 64
`;

// Added by the reload: it watches a template nobody creates, so the effects must not change
// (the subscription filter does: the bot resubscribes with the new template).
const UNRELATED_RULE = `
  - id: ${RELOADED_RULE_ID}
    description: Added mid-run by the reload; watches a template nobody creates.
    on:
      created: '#chaos:Chaos:Unused'
      party: issuer
    then:
      - create:
          template: '#chaos:Chaos:Unused'
          createArguments: { owner: '\${{ parties.issuer }}' }
        actAs: [issuer]
`;

export const RULE_FILE = 'chaos.yaml';

export function writeRules(rulesDir: string): void {
  mkdirSync(rulesDir, { recursive: true });
  writeFileSync(join(rulesDir, RULE_FILE), EFFECT_RULE);
}

/** The reload's edit: the same file with an unrelated rule appended. */
export function editRules(rulesDir: string): void {
  writeFileSync(join(rulesDir, RULE_FILE), EFFECT_RULE + UNRELATED_RULE);
}

export type ChaosBotConfig = {
  readonly rulesDir: string;
  readonly stateDir: string;
  /** The journal in this PostgreSQL schema (state.postgres); state.dir keeps the caches. */
  readonly postgres?: { readonly url: string; readonly schema: string };
  readonly start?: string;
  readonly extra?: string;
};

export function botConfigText(l: ChaosLedger, c: ChaosBotConfig): string {
  return [
    'ledger:',
    `  url: ${l.url}`,
    `  userId: ${BOT_USER}`,
    '  auth: { type: none }',
    'parties:',
    `  issuer: '${l.issuer}'`,
    `  payer: '${l.payer}'`,
    `rules: ['${c.rulesDir}']`,
    c.postgres === undefined
      ? `state: { dir: '${c.stateDir}' }`
      : `state: { dir: '${c.stateDir}', postgres: { url: '${c.postgres.url}', schema: ${c.postgres.schema} } }`,
    `start: ${c.start ?? 'checkpoint'}`,
    'submission:',
    '  maxInFlight: 64',
    '  completionTimeout: 2s',
    '  retry: { maxAttempts: 60, initialDelay: 20ms, maxDelay: 500ms, deadline: 15m }',
    'http: { port: 0, host: 127.0.0.1 }',
    'log: { level: info, pretty: false }',
    c.extra ?? '',
  ].join('\n');
}

/** The counters read from one process's /metrics (each process counts from zero). */
export type BotCounters = {
  reconnectsUpdates: number;
  reconnectsCompletions: number;
  reloadsApplied: number;
  reloadsRejected: number;
  submissions: number;
  recorded: number;
  retries: number;
  succeeded: number;
  duplicate: number;
  deadLettered: number;
  /** Intents settled succeeded by the earlier-commit lookup (a consuming command refused after it committed). */
  earlierCommits: number;
};

const ZERO: BotCounters = {
  reconnectsUpdates: 0,
  reconnectsCompletions: 0,
  reloadsApplied: 0,
  reloadsRejected: 0,
  submissions: 0,
  recorded: 0,
  retries: 0,
  succeeded: 0,
  duplicate: 0,
  deadLettered: 0,
  earlierCommits: 0,
};

/** The gauges of the live process: its store and its position in the stream. */
export type BotGauges = {
  /** Intents in the store that are not terminal (pending + submitted). */
  readonly open: number;
  readonly intents: number;
  readonly processedOffset: number | undefined;
  /** The ids of the rules the process runs. */
  readonly rules: readonly string[];
};

const sum = (text: string, re: RegExp): number => {
  let total = 0;
  for (const m of text.matchAll(re)) total += Number(m[1]);
  return total;
};

function parseMetrics(text: string): BotCounters {
  const value = (re: RegExp): number => Number(re.exec(text)?.[1] ?? 0);
  const state = (s: string): number =>
    sum(text, new RegExp(`^ledgerbot_intents_total\\{[^}]*state="${s}"[^}]*\\} (\\S+)`, 'gm'));
  return {
    reconnectsUpdates: value(/^ledgerbot_stream_reconnects_total\{stream="updates"\} (\S+)/m),
    reconnectsCompletions: value(
      /^ledgerbot_stream_reconnects_total\{stream="completions"\} (\S+)/m,
    ),
    reloadsApplied: value(/^ledgerbot_rules_reloaded_total\{[^}]*"applied"[^}]*\} (\S+)/m),
    reloadsRejected: value(/^ledgerbot_rules_reloaded_total\{[^}]*"rejected"[^}]*\} (\S+)/m),
    submissions: value(/^ledgerbot_submissions_total (\S+)/m),
    recorded: sum(text, /^ledgerbot_intents_recorded_total\{[^}]*\} (\S+)/gm),
    retries: sum(text, /^ledgerbot_intent_retries_total\{[^}]*\} (\S+)/gm),
    succeeded: state('succeeded'),
    duplicate: state('duplicate'),
    deadLettered: state('dead-lettered'),
    earlierCommits: value(/^ledgerbot_earlier_commits_found_total (\S+)/m),
  };
}

function parseGauges(text: string): BotGauges {
  const store = (s: string): number =>
    Number(
      new RegExp(`^ledgerbot_store_intents\\{state="${s}"\\} (\\S+)`, 'm').exec(text)?.[1] ?? 0,
    );
  const processed = /^ledgerbot_processed_offset (\S+)/m.exec(text)?.[1];
  return {
    open: store('pending') + store('submitted'),
    intents: sum(text, /^ledgerbot_store_intents\{[^}]*\} (\S+)/gm),
    processedOffset: processed === undefined ? undefined : Number(processed),
    rules: [...text.matchAll(/^ledgerbot_rule_paused\{rule="([^"]+)"\}/gm)].map((m) => m[1]!),
  };
}

type Instance = {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: WriteStream;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  opsUrl: string | undefined;
  counters: BotCounters;
  gauges: BotGauges | undefined;
  expectedExit: boolean;
  /** Ends when the store's server crashed may be its failed commit: recorded, not unexpected. */
  outage: boolean;
  /** Fleet members: log lines saying it lost rules, or that a commit of it was fenced. */
  lostLines: number;
  fencedLines: number;
  /** Its `lostLines + fencedLines` when it was paused (SIGSTOP), if it was. */
  pausedMark: number | undefined;
  /** The store error its log named last (a failed commit, or a failed open while starting). */
  storeError: StoreFailure | undefined;
  /** Log lines of interest: warnings and errors (pino levels 40+), reloads. */
  warnings: number;
  errors: number;
  reloadLines: number;
};

/** A process that ended by itself while the store's server was down (or coming back). */
export type OutageExit = {
  readonly process: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /**
   * The store error its log named: STORE_COMMIT_FAILED (it was running), STORE_OPEN_FAILED (it was
   * starting), or none.
   */
  readonly storeError: StoreFailure | undefined;
};

export type StoreFailure = 'STORE_COMMIT_FAILED' | 'STORE_OPEN_FAILED';

/** One replica: a state directory and the processes that ran on it, one after another. */
export class ChaosBot {
  readonly name: string;
  readonly configPath: string;
  readonly stateDir: string;
  readonly #logDir: string;
  readonly #instances: Instance[] = [];
  readonly unexpectedExits: string[] = [];
  /** Processes that stopped by themselves during a crash of the store's server, and how. */
  readonly outageExits: OutageExit[] = [];

  constructor(name: string, dir: string, l: ChaosLedger, c: Omit<ChaosBotConfig, 'stateDir'>) {
    this.name = name;
    this.stateDir = join(dir, `state-${name}`);
    this.#logDir = dir;
    this.configPath = join(dir, `bot-${name}.config.yaml`);
    writeFileSync(this.configPath, botConfigText(l, { ...c, stateDir: this.stateDir }));
  }

  get processes(): number {
    return this.#instances.length;
  }

  get logFiles(): string[] {
    return this.#instances.map((i) => join(this.#logDir, `${i.name}.log`));
  }

  get #current(): Instance | undefined {
    const last = this.#instances.at(-1);
    return last === undefined || last.child.exitCode !== null || last.child.signalCode !== null
      ? undefined
      : last;
  }

  get running(): boolean {
    return this.#current !== undefined;
  }

  start(): void {
    const name = `bot-${this.name}-${this.#instances.length + 1}`;
    const child = spawn(
      process.execPath,
      ['bin/ledgerbot.js', 'run', '--config', this.configPath],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const log = createWriteStream(join(this.#logDir, `${name}.log`));
    const instance: Instance = {
      name,
      child,
      log,
      exited: new Promise((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      ),
      opsUrl: undefined,
      counters: { ...ZERO },
      gauges: undefined,
      expectedExit: false,
      outage: false,
      storeError: undefined,
      lostLines: 0,
      fencedLines: 0,
      pausedMark: undefined,
      warnings: 0,
      errors: 0,
      reloadLines: 0,
    };
    child.stderr.pipe(log, { end: false });
    createInterface({ input: child.stdout }).on('line', (text) => {
      log.write(`${text}\n`);
      const level = Number(/"level":(\d+)/.exec(text)?.[1] ?? 30);
      if (level >= 50) instance.errors += 1;
      else if (level >= 40) instance.warnings += 1;
      if (text.includes('reloading the rules')) instance.reloadLines += 1;
      if (text.includes('"rules lost')) instance.lostLines += 1;
      if (text.includes('was fenced') || text.includes('STORE_FENCED')) instance.fencedLines += 1;
      const failure = /STORE_(?:COMMIT|OPEN)_FAILED/.exec(text)?.[0];
      if (failure !== undefined) instance.storeError = failure as StoreFailure;
      // The latest: a fleet member starts a new bot, and ops server (port 0: a new port), each
      // time what it owns changes.
      if (text.includes('ops server listening')) {
        instance.opsUrl = /"url":"([^"]+)"/.exec(text)?.[1] ?? instance.opsUrl;
      }
    });
    void instance.exited.then(({ code, signal }) => {
      log.end();
      if (instance.expectedExit) return;
      if (instance.outage) {
        this.outageExits.push({
          process: name,
          code,
          signal,
          storeError: instance.storeError,
        });
      } else {
        this.unexpectedExits.push(`${name} exited by itself (code ${code}, signal ${signal})`);
      }
    });
    this.#instances.push(instance);
  }

  /** Waits (bounded) until the current process answers /readyz with 200. */
  async ready(timeoutMs: number): Promise<boolean> {
    const until = performance.now() + timeoutMs;
    while (performance.now() < until) {
      const i = this.#current;
      if (i?.opsUrl !== undefined) {
        try {
          const res = await fetch(`${i.opsUrl}/readyz`, { signal: AbortSignal.timeout(1000) });
          await res.body?.cancel();
          if (res.status === 200) return true;
        } catch {
          // not up yet
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  /**
   * The store's server is about to crash: the live process may stop on its failed commit (as it
   * must). Resolves when it ends by itself (true), or false when it was killed or stopped, or
   * is still running after `timeoutMs`.
   */
  expectStoreOutage(timeoutMs: number): Promise<boolean> {
    const i = this.#current;
    if (i === undefined) return Promise.resolve(false);
    i.outage = true;
    return Promise.race([
      i.exited.then(() => !i.expectedExit),
      new Promise<boolean>((r) =>
        setTimeout(() => {
          // It outlived the outage: a later end of this process is unexpected again.
          i.outage = false;
          r(false);
        }, timeoutMs).unref(),
      ),
    ]);
  }

  /** A fleet member's /status `fleet` part: its instance id and the rules it runs. */
  async fleetStatus(): Promise<{ instanceId: string; running: string[] } | undefined> {
    const i = this.#current;
    if (i?.opsUrl === undefined) return undefined;
    try {
      const res = await fetch(`${i.opsUrl}/status`, { signal: AbortSignal.timeout(2000) });
      const body = (await res.json()) as { fleet?: { instanceId: string; running: string[] } };
      return body.fleet;
    } catch {
      return undefined; // paused, or between two bots
    }
  }

  /** SIGSTOP: the process keeps its leases in memory while the fleet sees it stop renewing. */
  pause(): boolean {
    const i = this.#current;
    if (i === undefined) return false;
    i.pausedMark = i.lostLines + i.fencedLines;
    return i.child.kill('SIGSTOP');
  }

  /** SIGCONT after `pause`. */
  resume(): void {
    this.#current?.child.kill('SIGCONT');
  }

  /**
   * Whether the process paused last has said since that it lost its rules or had a commit
   * fenced (waits up to `timeoutMs` for it): a member past its lease must not go on writing.
   */
  async fencedSincePause(timeoutMs: number): Promise<boolean> {
    const i = this.#instances.findLast((x) => x.pausedMark !== undefined);
    if (i === undefined) return false;
    const until = performance.now() + timeoutMs;
    for (;;) {
      if (i.lostLines + i.fencedLines > i.pausedMark!) return true;
      if (performance.now() > until) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async kill(): Promise<void> {
    const i = this.#current;
    if (i === undefined) return;
    i.expectedExit = true;
    await this.scrape();
    i.child.kill('SIGKILL');
    await i.exited;
  }

  /**
   * SIGHUP to the live process, once it has logged its ops server (its SIGHUP handler is in place
   * by then: during start-up a SIGHUP takes the default action and ends the process).
   */
  hup(): boolean {
    const i = this.#current;
    if (i?.opsUrl === undefined) return false;
    i.child.kill('SIGHUP');
    return true;
  }

  /** SIGTERM (drains and saves the checkpoint); SIGKILL after `graceMs`. Returns the exit code. */
  async stop(graceMs = 30_000): Promise<number | null> {
    const i = this.#current;
    if (i === undefined) return null;
    await this.scrape();
    i.expectedExit = true;
    i.child.kill('SIGTERM');
    const timer = setTimeout(() => i.child.kill('SIGKILL'), graceMs);
    const { code } = await i.exited;
    clearTimeout(timer);
    return code;
  }

  /** Reads the live process's /metrics; returns its gauges, or undefined if it did not answer. */
  async scrape(): Promise<BotGauges | undefined> {
    const i = this.#current;
    if (i?.opsUrl === undefined) return undefined;
    try {
      const res = await fetch(`${i.opsUrl}/metrics`, { signal: AbortSignal.timeout(2000) });
      if (res.status !== 200) {
        await res.body?.cancel();
        return undefined;
      }
      const text = await res.text();
      i.counters = parseMetrics(text);
      i.gauges = parseGauges(text);
      return i.gauges;
    } catch {
      // Killed or busy: the last scrape stands.
      return undefined;
    }
  }

  /** The counters summed over every process of this replica (each as of its last scrape). */
  totals(): BotCounters & { warnings: number; errors: number } {
    const t = { ...ZERO, warnings: 0, errors: 0 };
    for (const i of this.#instances) {
      for (const k of Object.keys(ZERO) as (keyof BotCounters)[]) t[k] += i.counters[k];
      t.warnings += i.warnings;
      t.errors += i.errors;
    }
    return t;
  }
}
