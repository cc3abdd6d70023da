import { parseArgs } from 'node:util';
import type { CliIo } from './cli-io.js';
import type { CliCommand } from './cli-command.js';

export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'run the bot against the embedded sandbox with the example rules',
  run: (args: string[], io: CliIo) => {
    parseArgs({ args, options: {}, strict: true });
    io.out(
      [
        'ledgerbot demo: not yet available.',
        '',
        'What is coming, issue by issue:',
        '  - the embedded sandbox participant (ledgerbot sandbox) with the invoices example model;',
        '  - YAML rule files with CEL conditions, validation and explanations;',
        '  - the trigger runtime: exactly-once submissions with deterministic commandIds;',
        '  - cron schedules, operations endpoints, benchmarks and a chaos suite.',
        '',
        'Today the JSON Ledger API v2 client is available as a library: see README.md.',
        '',
      ].join('\n'),
    );
    return Promise.resolve(0);
  },
};
