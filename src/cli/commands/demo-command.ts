import { createWriteStream, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULTS } from '../../core/defaults.js';
import { systemClock } from '../../core/clock.js';
import { formatDuration } from '../../core/duration.js';
import { SeededRandom } from '../../core/seeded-random.js';
import { LedgerClient } from '../../ledger/ledger-client.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { startSandbox, type Sandbox } from '../../sandbox/start-sandbox.js';
import { storeQueries } from '../../store/store-queries.js';
import { openSqliteStore } from '../../store/open-sqlite-store.js';
import type { IntentState } from '../../store/store.js';
import { defineCommand } from '../define-command.js';
import type { CliIo } from '../cli-io.js';
import { colourFor, NO_COLOR_OPTION, type Colour } from '../present/colour.js';
import { DemoDriver } from './demo-driver.js';
import { clockText, DemoAccount, verifyDemoEffects } from './demo-report.js';
import { demoSummary } from '../present/demo-summary.js';
import { readConfig } from '../compose/read-config.js';
import { sandboxDarsOf } from '../compose/sandbox-dars.js';
import { rootLogger } from '../compose/root-logger.js';
import { startBot, type RunningBot } from '../compose/start-bot.js';
import { durationOption, integerOption, portOption } from '../cli-options.js';
import { UsageError } from '../usage-error.js';

const DEFAULT_PORT = DEFAULTS.cli.sandboxPort;
const DRIVER_USER = 'demo-driver';
/** How long the end of the demo waits for the bot to finish what the last actions started. */
const CATCH_UP_MS = 10_000;

const EXAMPLE_CONFIG = fileURLToPath(
  new URL('../../../examples/invoices/bot.config.yaml', import.meta.url),
);

export const demoCommand = defineCommand({
  name: 'demo',
  summary: 'run the bot against the embedded sandbox with the example rules',
  usage: `demo [--duration 30s] [--port 7575] [--pace 800ms] [--seed 1] [--state-dir DIR]`,
  description: `Starts the sandbox in this process with the invoices example (examples/invoices), runs the bot
with its rules, and drives some business: the issuer sends invoices, the payer accepts a large
one by hand now and then. Prints what each rule did, and at the end (Ctrl-C or --duration) a
summary with the ledger effects checked contract by contract.`,
  options: {
    duration: {
      type: 'string',
      value: 'D',
      help: 'stop after D (e.g. 30s, 2m); default: run until Ctrl-C',
    },
    port: {
      type: 'string',
      value: 'N',
      help: `the sandbox port (default ${DEFAULTS.cli.sandboxPort}, or a free one if that is taken; 0: a free one)`,
    },
    pace: {
      type: 'string',
      default: '800ms',
      value: 'D',
      help: 'time between two business actions (default 800ms)',
    },
    seed: {
      type: 'string',
      default: '1',
      value: 'N',
      help: 'seeds the business activity and the sandbox (default 1)',
    },
    'state-dir': {
      type: 'string',
      value: 'D',
      help: "the bot's state directory and log (default: a new temporary directory)",
    },
    ...NO_COLOR_OPTION,
  },
  run: async ({ values }, io) => {
    return runDemo(
      {
        durationMs:
          values.duration === undefined ? undefined : durationOption('--duration', values.duration),
        port: values.port === undefined ? undefined : portOption(values.port),
        paceMs: durationOption('--pace', values.pace),
        seed: integerOption('--seed', values.seed),
        stateDir: values['state-dir'],
        colour: colourFor(io, values['no-color']),
      },
      io,
    );
  },
});

type DemoOptions = {
  readonly durationMs: number | undefined;
  readonly port: number | undefined;
  readonly paceMs: number;
  readonly seed: number;
  readonly stateDir: string | undefined;
  readonly colour: Colour;
};

async function runDemo(o: DemoOptions, io: CliIo): Promise<number> {
  const clock = systemClock;
  const startedAt = clock.now();
  const stateDir = o.stateDir ?? mkdtempSync(join(tmpdir(), 'ledgerbot-demo-'));
  mkdirSync(stateDir, { recursive: true });
  const example = await readConfig(EXAMPLE_CONFIG, {
    ...process.env,
    LEDGERBOT_STATE_DIR: stateDir,
  });
  const endpoint = example.ledger.endpoint;
  if (endpoint.kind !== 'embedded') {
    throw new UsageError(`${EXAMPLE_CONFIG} must use an embedded ledger`);
  }
  // The JSON log goes to a file; the terminal gets the readable account.
  const logPath = join(stateDir, 'ledgerbot.log');
  const logFile = createWriteStream(logPath, { flags: 'a' });
  const logger = rootLogger(
    { level: 'info', pretty: false },
    { out: (t) => logFile.write(t), err: (t) => logFile.write(t) },
  );
  const say = (text: string): void => io.out(`${clockText(clock.now())}  ${text}\n`);

  let sandbox: Sandbox | undefined;
  let running: RunningBot | undefined;
  let driverClient: LedgerClient | undefined;
  const stopSignals = watchSignals(io);
  try {
    sandbox = await startDemoSandbox(o, example, endpoint, logger);
    const parties = { ...example.parties, ...sandbox.parties };
    const issuer = parties.issuer;
    const payer = parties.payer;
    if (issuer === undefined || payer === undefined) {
      throw new UsageError(`${EXAMPLE_CONFIG} must allocate the parties issuer and payer`);
    }
    // The bot is wired exactly as `ledgerbot run` wires it, pointed at this sandbox, with the
    // ops server (and so the console) on a free port unless the example config names one.
    const config: BotConfig = {
      ...example,
      ledger: { ...example.ledger, endpoint: { kind: 'url', url: sandbox.url } },
      parties,
      http: example.http ?? {
        port: 0,
        host: DEFAULTS.ops.host,
        readyMaxLag: DEFAULTS.ops.readyMaxLag,
        readOnly: false,
        allowedHosts: [],
      },
    };
    running = await startBot(config, logger);
    const bot = running.bot;
    const consoleUrl = `${running.ops!.url}/`;
    driverClient = await LedgerClient.create({
      url: sandbox.url,
      logger: logger.child({ component: 'demo-driver' }),
    });
    const driver = new DemoDriver({
      client: driverClient,
      issuer,
      payer,
      userId: DRIVER_USER,
      clock,
      random: new SeededRandom(o.seed),
      paceMs: o.paceMs,
      say: (text) => say(`${'business'.padEnd(26)} ${text}`),
    });
    const account = new DemoAccount(driverClient, issuer, driver.invoices, o.colour);

    io.out(
      [
        'ledgerbot demo: the invoices example on an embedded participant',
        `  sandbox  ${sandbox.url}   (JSON Ledger API v2; other clients may watch the same ledger)`,
        `  console  ${consoleUrl}`,
        `  parties  issuer = ${issuer}`,
        `           payer  = ${payer}`,
        `  rules    ${config.rules.map((r) => relative(process.cwd(), r) || '.').join(', ')}`,
        `  log      ${logPath}`,
        `  ${o.durationMs === undefined ? 'Runs until Ctrl-C' : `Runs for ${formatDuration(o.durationMs)} (Ctrl-C stops it earlier)`}.`,
        '',
        `${'time'.padEnd(8)}  ${'rule'.padEnd(26)} ${'command'.padEnd(44)} result`,
        '',
      ].join('\n'),
    );
    const outcomesByRule = new Map<string, Map<IntentState, number>>();
    bot.events.on('intent', (event) => {
      if (event.to !== 'pending' && event.to !== 'submitted') {
        const byState = outcomesByRule.get(event.ruleId) ?? new Map<IntentState, number>();
        byState.set(event.to, (byState.get(event.to) ?? 0) + 1);
        outcomesByRule.set(event.ruleId, byState);
      }
      void account.line(event).then((line) => {
        if (line !== undefined) say(line);
      });
    });
    bot.events.on('rule-error', (e) =>
      say(`${e.ruleId.padEnd(26)} ${o.colour.red(`rule error: ${e.message}`)}`),
    );

    const stopDriver = new AbortController();
    const driving = driver.run(stopDriver.signal).catch((err: unknown) => {
      say(`the business driver stopped: ${(err as Error).message}`);
    });
    const why = await Promise.race([
      stopSignals.first.then((s) => `${s} received`),
      bot.done.then(() => `the bot stopped (${bot.state})`),
      ...(o.durationMs === undefined
        ? []
        : [sleepRef(o.durationMs).then(() => `${formatDuration(o.durationMs!)} elapsed`)]),
    ]);
    io.out(
      `\n${clockText(clock.now())}  stopping: ${why}; letting the bot finish what is under way…\n`,
    );
    stopDriver.abort();
    await driving;
    const caughtUp = await catchUp(
      running,
      driverClient,
      Math.min(CATCH_UP_MS, stopSignals.graceMs()),
    );
    const verdict = await verifyDemoEffects(
      driverClient,
      issuer,
      driver.invoices.values(),
      o.colour,
    );
    const metrics = bot.metrics.snapshot();
    await running.close();
    const failed = bot.state === 'failed' ? bot.error : undefined;
    running = undefined;
    const states = await finalStates(stateDir);
    io.out(
      demoSummary({
        elapsedMs: clock.now() - startedAt,
        eventsSeen: metrics.eventsSeen,
        transactionsSeen: metrics.transactionsSeen,
        ruleErrors: metrics.ruleErrors,
        states,
        outcomesByRule,
        caughtUp,
        verdict,
        invoices: driver.invoices.size,
        logPath,
        failed,
        colour: o.colour,
      }),
    );
    return verdict.ok && failed === undefined ? 0 : 1;
  } finally {
    stopSignals.dispose();
    await running?.close().catch(() => undefined);
    await driverClient?.close().catch(() => undefined);
    await sandbox?.stop().catch(() => undefined);
    await new Promise<void>((resolve) => logFile.end(resolve));
  }
}

async function startDemoSandbox(
  o: DemoOptions,
  example: BotConfig,
  endpoint: Extract<BotConfig['ledger']['endpoint'], { kind: 'embedded' }>,
  logger: ReturnType<typeof rootLogger>,
): Promise<Sandbox> {
  const botUser = example.ledger.userId;
  const options = {
    dars: await sandboxDarsOf(example.ledger.packages),
    models: endpoint.models,
    parties: endpoint.parties,
    users: [
      { id: botUser, actAs: endpoint.parties },
      { id: DRIVER_USER, actAs: endpoint.parties },
    ],
    seed: o.seed,
    logger: logger.child({ component: 'sandbox' }),
  };
  try {
    return await startSandbox({ ...options, port: o.port ?? DEFAULT_PORT });
  } catch (err) {
    // The default port is a convenience: when it is taken, any free one will do.
    if (o.port === undefined && isAddressInUse(err)) return startSandbox({ ...options, port: 0 });
    if (isAddressInUse(err))
      throw new UsageError(`port ${o.port} is in use; pick another with --port (0: any free one)`, {
        cause: err,
      });
    throw err;
  }
}

function isAddressInUse(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'EADDRINUSE') return true;
    if (/EADDRINUSE/.test(String((e as Error).message))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Waits until the bot has read up to the ledger end with nothing in flight, so the effects of
 * the last business actions are on the ledger before they are checked. The ledger end is read
 * again each time: the bot's own submissions move it.
 */
async function catchUp(
  running: RunningBot,
  client: LedgerClient,
  limitMs: number,
): Promise<boolean> {
  const until = Date.now() + limitMs;
  let quiet = 0;
  while (Date.now() < until) {
    const m = running.bot.metrics;
    if (running.bot.state !== 'running') return false;
    const end = await client.ledgerEnd();
    if ((m.lastOffset ?? 0) >= end && m.inFlight === 0 && m.waitingForAdmission === 0) {
      if (++quiet >= 2) return true;
    } else {
      quiet = 0;
    }
    await sleepRef(100);
  }
  return false;
}

async function finalStates(stateDir: string): Promise<Record<IntentState, number> | undefined> {
  try {
    const store = openSqliteStore({ dir: stateDir, readonly: true });
    try {
      return await storeQueries(store).countByState();
    } finally {
      store.close();
    }
  } catch {
    return undefined;
  }
}

/** A timer that keeps the process alive (the clock's timers do not). */
function sleepRef(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type SignalWatch = {
  readonly first: Promise<NodeJS.Signals>;
  /** How long the wind-down may still take: short after a second signal. */
  graceMs(): number;
  dispose(): void;
};

/** The first SIGINT/SIGTERM stops the demo gracefully; a second one makes it exit at once. */
function watchSignals(io: CliIo): SignalWatch {
  let count = 0;
  let resolveFirst!: (s: NodeJS.Signals) => void;
  const first = new Promise<NodeJS.Signals>((resolve) => (resolveFirst = resolve));
  const on = (signal: NodeJS.Signals): void => {
    count += 1;
    if (count === 1) {
      resolveFirst(signal);
      return;
    }
    io.err('ledgerbot demo: stopping now\n');
    process.exit(130);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    first,
    graceMs: () => (count > 1 ? 0 : CATCH_UP_MS),
    dispose: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}
