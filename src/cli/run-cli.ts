import { parseArgs } from 'node:util';
import { LedgerbotError } from '../core/ledgerbot-error.js';
import type { CliCommand } from './cli-command.js';
import { processIo, type CliIo } from './cli-io.js';
import { backtestCommand } from './commands/backtest-command.js';
import { completionCommand } from './commands/completion-command.js';
import { deadLettersCommand } from './commands/dead-letters-command.js';
import { demoCommand } from './commands/demo-command.js';
import { explainCommand } from './commands/explain-command.js';
import { initCommand } from './commands/init-command.js';
import { packagesCommand } from './commands/packages-command.js';
import { pauseCommand, resumeCommand } from './commands/pause-resume-command.js';
import { reloadCommand } from './commands/reload-command.js';
import { runCommand } from './commands/run-command.js';
import { runSlotCommand } from './commands/run-slot-command.js';
import { sandboxCommand } from './commands/sandbox-command.js';
import { scheduleCommand } from './commands/schedule-command.js';
import { statusCommand } from './commands/status-command.js';
import { testCommand } from './commands/test-command.js';
import { UsageError } from './usage-error.js';
import { validateCommand } from './commands/validate-command.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

const commands: readonly CliCommand[] = [
  runCommand,
  demoCommand,
  sandboxCommand,
  initCommand,
  validateCommand,
  testCommand,
  packagesCommand,
  scheduleCommand,
  runSlotCommand,
  statusCommand,
  pauseCommand,
  resumeCommand,
  reloadCommand,
  deadLettersCommand,
  explainCommand,
  backtestCommand,
  completionCommand(() => commands),
];

export function helpText(): string {
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
        io.out(`${await packageVersion()}\n`);
        return EXIT_OK;
      }
      io.out(helpText());
      return values.help === true ? EXIT_OK : EXIT_USAGE;
    }
    const command = commands.find((c) => c.name === first);
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

async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(
    await readFile(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return pkg.version;
}
