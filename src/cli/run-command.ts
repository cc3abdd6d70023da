import { parseArgs } from 'node:util';
import { redactSecrets } from '../core/redact-secrets.js';
import { batchedWriter } from './batched-writer.js';
import { pino, type Logger as PinoLogger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { LedgerbotError } from '../core/ledgerbot-error.js';
import { createBot, type Bot } from '../runtime/bot.js';
import type { BotConfig, LogConfig } from '../runtime/config/bot-config.js';
import type { Sandbox } from '../sandbox/start-sandbox.js';
import { openSqliteStore } from '../store/open-sqlite-store.js';
import type { Store } from '../store/store.js';
import { startOpsServer, type OpsServer, type ReloadOutcome } from '../runtime/ops/ops-server.js';
import { ruleReloader, watchRuleFiles } from './rule-reloader.js';
import type { CliCommand } from './cli-command.js';
import { loadConfigRules } from './config-rules.js';
import { openConfigLedger } from './open-config-ledger.js';
import type { CliIo } from './cli-io.js';
import { readConfig } from './read-config.js';
import { untilSignal } from './until-signal.js';
import { UsageError } from './usage-error.js';

const HELP = `Usage: ledgerbot run --config bot.config.yaml [--shadow] [--reset-checkpoint]

Runs the bot: follows the ledger's updates, evaluates the rules and submits what they call for,
exactly once. Logs are JSON lines on stdout (log.pretty: true, or a terminal while log.pretty
is unset: one readable line each).
SIGINT or SIGTERM stop intake, wait for submissions already out, save the checkpoint and exit 0.

With \`http\` in the config it serves /livez, /readyz, /metrics, /status, pause and resume, and
dead letters (docs/operations-api.md). SIGHUP, or saving a rule file, reloads the rules: all of
them if all are valid, none otherwise.

Options:
  --config FILE  the bot config (default ./bot.config.yaml)
  --shadow       evaluate live traffic and log the intents, but submit nothing and write nothing
                 to the state store (give it its own state.dir while the real bot runs)
  --reset-checkpoint
                 ignore the stored checkpoint and begin at the config's \`start\` (stored at
                 once); for one start only, never in a service definition (docs/runtime.md)
  -h, --help     show this help

Exit status: 0 after a signal, 1 when the bot fails, 2 for config or rule errors.
`;

export const runCommand: CliCommand = {
  name: 'run',
  summary: 'run the bot: events in, exactly-once ledger effects out',
  run: async (args: string[], io: CliIo) => {
    const { values } = parseArgs({
      args,
      options: {
        config: { type: 'string', default: 'bot.config.yaml' },
        shadow: { type: 'boolean' },
        'reset-checkpoint': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
    if (values.help === true) {
      io.out(HELP);
      return 0;
    }
    const shadow = values.shadow === true;
    const config = await readConfig(values.config);
    const logger = rootLogger(config.log, io, process.stdout.isTTY === true);
    // Signals are caught before anything starts: a SIGTERM or SIGHUP that arrives while the bot
    // is starting must not take the process down with the default action.
    const stopSignal = untilSignal();
    let running: RunningBot | undefined;
    let reloadPending = false;
    const reloadNow = (trigger: string): void => {
      logger.info({ trigger }, 'reloading the rules');
      if (running === undefined) {
        reloadPending = true;
        return;
      }
      void running.reload();
    };
    const onHup = (): void => reloadNow('SIGHUP');
    process.on('SIGHUP', onHup);
    // Watched before the bot reads its rules: an edit saved while it starts (which takes a
    // while against a slow participant) is reloaded once it runs, not missed.
    const stopWatching = watchRuleFiles(config.rules, () => reloadNow('file change'), logger);
    try {
      running = await startBot(config, logger, {
        shadow,
        resetCheckpoint: values['reset-checkpoint'] === true,
      });
    } catch (err) {
      process.off('SIGHUP', onHup);
      stopWatching();
      throw err;
    }
    if (reloadPending) void running.reload();
    const signal = await Promise.race([stopSignal, running.bot.done.then(() => undefined)]);
    process.off('SIGHUP', onHup);
    stopWatching();
    if (signal !== undefined) logger.info({ signal }, 'signal received, stopping');
    await running.close();
    if (running.bot.state === 'failed') {
      const err = running.bot.error;
      io.err(`ledgerbot: the bot failed: ${(err as Error).message ?? String(err)}\n`);
      return 1;
    }
    return 0;
  },
};

export type RunningBot = {
  readonly bot: Bot;
  readonly sandbox: Sandbox | undefined;
  /** The ops HTTP server, when the config has `http`. */
  readonly ops: OpsServer | undefined;
  /** Re-reads the rule files and swaps them in if all are valid (see `ruleReloader`). */
  reload(): Promise<ReloadOutcome>;
  /** Stops the bot, then closes the client, the store and the sandbox. */
  close(): Promise<void>;
};

/**
 * Builds everything `run` needs from the config and starts the bot: the sandbox in embedded mode
 * (with the aliases allocated and a user that can act as them), the auth provider, the client,
 * the store and the rules. Rule errors are UsageErrors (exit 2).
 */
export async function startBot(
  config: BotConfig,
  logger: PinoLogger,
  options: { readonly shadow?: boolean; readonly resetCheckpoint?: boolean } = {},
): Promise<RunningBot> {
  const shadow = options.shadow === true;
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        logger.warn({ error: (err as Error).message }, 'cleanup failed');
      }
    }
  };
  try {
    // Rules first: a mistake in them exits 2 before anything is started.
    const ruleSet = await loadConfigRules(config, (warning) =>
      logger.warn({ file: warning.file, line: warning.line, col: warning.col }, warning.message),
    );
    const ledger = await openConfigLedger(config, logger);
    cleanups.push(() => ledger.close());
    const { client, parties, sandbox } = ledger;
    // A shadow bot writes nothing, so it need not lock the state out from operator tools.
    const store: Store = openSqliteStore({
      dir: config.state.dir,
      exclusive: !shadow,
      groupCommit: true,
    });
    cleanups.push(() => store.close());
    const bot = createBot({
      rules: ruleSet,
      parties,
      userId: config.ledger.userId,
      ledger: client,
      store,
      start: config.start,
      resetCheckpoint: options.resetCheckpoint === true,
      submission: {
        maxInFlight: config.submission.maxInFlight,
        completionTimeoutMs: config.submission.completionTimeoutMs,
        dedup: config.submission.dedup,
      },
      logger,
      shadow,
      retentionMs: config.state.retentionMs,
    });
    await bot.start();
    cleanups.push(() => bot.stop());
    const reload = ruleReloader(config, bot, logger);
    let ops: OpsServer | undefined;
    if (config.http !== undefined) {
      ops = await startOpsServer({
        bot,
        store,
        ledger: client,
        host: config.http.host,
        port: config.http.port,
        readyMaxLag: config.http.readyMaxLag,
        ...(config.http.token === undefined ? {} : { token: config.http.token }),
        reload,
        logger,
      });
      const server = ops;
      cleanups.push(() => server.close());
    }
    return {
      bot,
      sandbox,
      ops,
      reload,
      close: async () => {
        await bot.stop();
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    if (err instanceof LedgerbotError && err.code === 'UNKNOWN_PARTY') {
      throw new UsageError(err.message, { cause: err });
    }
    throw err;
  }
}

/**
 * Whether log lines are pretty-printed: `log.pretty` decides when it is set (false means JSON
 * even on a terminal); unset, a terminal gets pretty lines and anything else JSON.
 */
export function usePrettyLogs(pretty: boolean | undefined, tty: boolean): boolean {
  return pretty ?? tty;
}

/**
 * The root logger: JSON lines (what log shippers want), or pino-pretty's one-line form (see
 * usePrettyLogs; `tty`: stdout is a terminal, which also turns colours on).
 */
export function rootLogger(log: LogConfig, io: CliIo, tty = false): PinoLogger {
  const options = {
    level: log.level,
    // Secrets never reach the logs, even if a component puts one in a field by mistake.
    formatters: { log: redactSecrets, bindings: redactSecrets },
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const out = batchedWriter(io.out);
  if (!usePrettyLogs(log.pretty, tty)) {
    return pino(options, { write: out });
  }
  const pretty = prettyFactory({ ...PRETTY_OPTIONS, colorize: tty });
  return pino(options, { write: (line: string) => out(pretty(line)) });
}

const PRETTY_OPTIONS = {
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname',
} as const;

/** `[12:00:01.000] INFO: message {"key":"value"}` from one pino JSON line (no colours). */
export function prettyLine(line: string): string {
  return prettyFactory({ ...PRETTY_OPTIONS, colorize: false })(line);
}
