import type { Logger as PinoLogger } from 'pino';
import { AbortError } from '../../core/abort-error.js';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { configOption } from '../cli-options.js';
import { defineCommand } from '../define-command.js';
import type { CliIo } from '../cli-io.js';
import { limitHeapGrowth } from '../compose/heap-growth.js';
import { readConfig } from '../compose/read-config.js';
import { watchRuleFiles } from '../compose/rule-reloader.js';
import { rootLogger } from '../compose/root-logger.js';
import { startBot, type RunningBot } from '../compose/start-bot.js';
import { startFleetMember, type FleetMember } from '../compose/start-fleet-member.js';
import { untilSignal } from '../until-signal.js';
import { UsageError } from '../usage-error.js';

export const runCommand = defineCommand({
  name: 'run',
  summary: 'run the bot: events in, exactly-once ledger effects out',
  usage: `run --config bot.config.yaml [--shadow] [--reset-checkpoint]`,
  description: `Runs the bot: follows the ledger's updates, evaluates the rules and submits what they call for,
exactly once. Logs are JSON lines on stdout (log.pretty: true, or a terminal while log.pretty
is unset: one readable line each).
SIGINT or SIGTERM stop intake, wait for submissions already out, save the checkpoint and exit 0.
It runs until stopped, also with no rule enabled (idle, ready) and while the participant does
not answer at start (retried with backoff, for at most ledger.startTimeout when set).

With \`http\` in the config it serves /livez, /readyz, /metrics, /status, pause and resume, and
dead letters (docs/operations-api.md). SIGHUP, or saving a rule file, reloads the rules: all of
them if all are valid, none otherwise.`,
  options: {
    ...configOption(),
    shadow: {
      type: 'boolean',
      help: 'evaluate live traffic and log the intents, but submit nothing and write nothing\nto the state store (give it its own state.dir while the real bot runs)',
    },
    'reset-checkpoint': {
      type: 'boolean',
      help: `ignore the stored checkpoint and begin at the config's \`start\` (stored at\nonce); for one start only, never in a service definition (docs/runtime.md)`,
    },
  },
  footer: `Exit status (the reason is on stderr and in the log):
  0  stopped by SIGINT or SIGTERM
  1  runtime failure: the bot failed, the participant refused it, or ledger.startTimeout passed
  2  usage or config error: a bad option, config or rule file, no rule files, an unknown party
     or user (restarting will not help: fix it; \`ledgerbot validate\` lists rule problems)`,
  run: async ({ values }, io) => {
    const config = await readConfig(values.config);
    const logger = rootLogger(config.log, io, process.stdout.isTTY === true);
    return runUntilStopped(config, logger, io, {
      shadow: values.shadow === true,
      resetCheckpoint: values['reset-checkpoint'] === true,
    });
  },
});

/** What `run` waits on: one bot, or a fleet member's changing bot. */
type Running = {
  readonly done: Promise<void>;
  /** Why it failed, once `done`; undefined when it was stopped. */
  failure(): unknown;
  state(): string;
  reload(): Promise<unknown>;
  close(): Promise<void>;
};

function botRunning(running: RunningBot): Running {
  const { bot } = running;
  return {
    done: bot.done,
    failure: () => (bot.state === 'failed' ? (bot.error ?? new Error('failed')) : undefined),
    state: () => bot.state,
    reload: () => running.reload(),
    close: () => running.close(),
  };
}

function fleetRunning(member: FleetMember): Running {
  return {
    done: member.done,
    failure: () => member.failure(),
    state: () => member.current()?.bot.state ?? 'stopped',
    reload: () => member.reload(),
    close: () => member.close(),
  };
}

/**
 * Starts the bot and keeps the process up until a signal stops it or the bot fails; returns the
 * exit code. Every way out says why, on stderr and in the log.
 */
async function runUntilStopped(
  config: BotConfig,
  logger: PinoLogger,
  io: CliIo,
  options: { readonly shadow: boolean; readonly resetCheckpoint: boolean },
): Promise<number> {
  // Signal listeners do not keep Node's event loop alive, and the bot need not either: an idle
  // one (no rule enabled: no stream, no socket) or one waiting for the participant at start
  // (its retry timers are unref'd) has nothing pending, and Node would end the process as soon
  // as the loop empties (exit 13, "unsettled top-level await", without a word). A daemon stays
  // up until it is told to stop: this handle holds the loop until run returns.
  const hold = setInterval(() => undefined, 0x7fff_ffff);
  // Signals are caught before anything starts: a SIGTERM or SIGHUP that arrives while the bot
  // is starting must not take the process down with the default action.
  const stopSignal = untilSignal();
  const stopping = new AbortController();
  let signal: NodeJS.Signals | undefined;
  void stopSignal.then((s) => {
    signal = s;
    logger.info({ signal: s }, 'signal received, stopping');
    stopping.abort(new AbortError(`stopped by ${s}`));
  });
  const exit = (code: number, why: string, fields: Record<string, unknown> = {}): number => {
    io.err(`ledgerbot: ${why}\n`);
    const line = { ...fields, exitCode: code, why };
    if (code === 0) logger.info(line, 'exiting');
    else logger.error(line, 'exiting');
    return code;
  };
  let running: Running | undefined;
  let reloadPending = false;
  // A reload that throws (a fleet member between bots as it stops) is logged: a rejection left
  // unhandled would end the daemon.
  const reloadOf = (r: Running): void =>
    void r
      .reload()
      .catch((err: unknown) =>
        logger.error(
          { error: err instanceof Error ? err.message : String(err) },
          'the rules could not be reloaded; save the files again or send SIGHUP',
        ),
      );
  const reloadNow = (trigger: string): void => {
    logger.info({ component: 'reload', trigger }, 'reloading the rules');
    if (running === undefined) {
      reloadPending = true;
      return;
    }
    reloadOf(running);
  };
  const onHup = (): void => reloadNow('SIGHUP');
  process.on('SIGHUP', onHup);
  // Watched before the bot reads its rules: an edit saved while it starts (which takes a
  // while against a slow participant) is reloaded once it runs, not missed.
  const stopWatching = watchRuleFiles(config.rules, () => reloadNow('file change'), logger);
  try {
    try {
      const start = { ...options, signal: stopping.signal };
      // A fleet member runs a bot over the rules it owns (a new one when that changes).
      running =
        config.fleet !== undefined && !options.shadow
          ? fleetRunning(await startFleetMember(config, logger, start))
          : botRunning(await startBot(config, logger, start));
    } catch (err) {
      if (signal !== undefined && stopping.signal.aborted) {
        return exit(0, `stopped by ${signal} before the bot started`, { signal });
      }
      const message = (err as Error).message ?? String(err);
      const code = err instanceof UsageError ? 2 : 1;
      logger.error(
        {
          exitCode: code,
          why: 'the bot could not start',
          error: message,
          ...(err instanceof LedgerbotError ? { code: err.code } : {}),
        },
        'exiting',
      );
      throw err; // the CLI prints it and exits with its code
    }
    // Only now: while it starts, the bot compiles its rules, whose results it keeps, and V8's
    // own growth of the heap then spares it most of the full GCs the limit would make.
    limitHeapGrowth();
    if (reloadPending) reloadOf(running);
    await Promise.race([stopSignal, running.done]);
    await running.close();
    const failure = running.failure();
    if (failure !== undefined) {
      const why = failure instanceof Error ? failure.message : JSON.stringify(failure);
      return exit(1, `the bot failed: ${why}`);
    }
    if (signal !== undefined) return exit(0, `stopped by ${signal}`, { signal });
    return exit(1, `the bot stopped by itself (state ${running.state()})`);
  } finally {
    clearInterval(hold);
    process.off('SIGHUP', onHup);
    stopWatching();
  }
}
