import { parseArgs } from 'node:util';
import { LedgerbotError } from '../core/ledgerbot-error.js';
import { ledgerbotVersion } from '../core/ledgerbot-version.js';
import type { CliCommand } from './cli-command.js';
import { processIo, type CliIo } from './cli-io.js';
import { UsageError } from './usage-error.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * Every command, in the help's order, each loaded when it is used: `ledgerbot run` does not load
 * the modules of the other commands (start-up is a benchmarked target).
 */
const COMMANDS: readonly (readonly [name: string, load: () => Promise<CliCommand>])[] = [
  ['run', async () => (await import('./commands/run-command.js')).runCommand],
  ['demo', async () => (await import('./commands/demo-command.js')).demoCommand],
  ['sandbox', async () => (await import('./commands/sandbox-command.js')).sandboxCommand],
  ['init', async () => (await import('./commands/init-command.js')).initCommand],
  ['validate', async () => (await import('./commands/validate-command.js')).validateCommand],
  ['test', async () => (await import('./commands/test-command.js')).testCommand],
  ['packages', async () => (await import('./commands/packages-command.js')).packagesCommand],
  ['schedule', async () => (await import('./commands/schedule-command.js')).scheduleCommand],
  ['run-slot', async () => (await import('./commands/run-slot-command.js')).runSlotCommand],
  ['status', async () => (await import('./commands/status-command.js')).statusCommand],
  ['pause', async () => (await import('./commands/pause-resume-command.js')).pauseCommand],
  ['resume', async () => (await import('./commands/pause-resume-command.js')).resumeCommand],
  ['reload', async () => (await import('./commands/reload-command.js')).reloadCommand],
  [
    'dead-letters',
    async () => (await import('./commands/dead-letters-command.js')).deadLettersCommand,
  ],
  ['state', async () => (await import('./commands/state-command.js')).stateCommand],
  ['explain', async () => (await import('./commands/explain-command.js')).explainCommand],
  ['backtest', async () => (await import('./commands/backtest-command.js')).backtestCommand],
];

/** Every command, loaded, `completion` last (it completes them all). */
async function allCommands(): Promise<CliCommand[]> {
  const commands = await Promise.all(COMMANDS.map(([, load]) => load()));
  const { completionCommand } = await import('./commands/completion-command.js');
  commands.push(completionCommand(() => commands));
  return commands;
}

async function commandNamed(name: string): Promise<CliCommand | undefined> {
  if (name === 'completion') return (await allCommands()).at(-1);
  return COMMANDS.find(([n]) => n === name)?.[1]();
}

/** The top-level help: every command with its summary (loads them all). */
export async function helpText(): Promise<string> {
  const commands = await allCommands();
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'ledgerbot: declarative, exactly-once automation for Canton ledgers (JSON Ledger API v2)',
    '',
    'Usage: ledgerbot <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Options:',
    '  -h, --help     show this help (or `ledgerbot <command> --help`)',
    '  -v, --version  print the version',
    '',
  ].join('\n');
}

/** Runs the CLI and returns the process exit code: 0 ok, 1 runtime failure, 2 usage or config error. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    const first = argv[0];
    if (first === undefined || first.startsWith('-')) {
      const { values } = parseArgs({
        args: argv,
        options: {
          help: { type: 'boolean', short: 'h' },
          version: { type: 'boolean', short: 'v' },
        },
        strict: true,
      });
      if (values.version === true) {
        io.out(`${ledgerbotVersion()}\n`);
        return EXIT_OK;
      }
      io.out(await helpText());
      return values.help === true ? EXIT_OK : EXIT_USAGE;
    }
    const command = await commandNamed(first);
    if (command === undefined) {
      throw new UsageError(`unknown command "${first}"; run \`ledgerbot --help\` for the list`);
    }
    return await command.run(argv.slice(1), io);
  } catch (err) {
    if (err instanceof UsageError || isParseArgsError(err)) {
      io.err(`ledgerbot: ${(err as Error).message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof LedgerbotError) {
      io.err(`ledgerbot: ${err.message} [${err.code}]\n`);
      return EXIT_FAILURE;
    }
    throw err;
  }
}

function isParseArgsError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}
