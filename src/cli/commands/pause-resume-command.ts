import { parseArgs } from 'node:util';
import type { CliCommand } from '../cli-command.js';
import type { CliIo } from '../cli-io.js';
import { callOps, requireOpsClient } from '../ops-client.js';
import { readConfig } from '../compose/read-config.js';
import { UsageError } from '../usage-error.js';

type Action = 'pause' | 'resume';

const HELP: Record<Action, string> = {
  pause: `Usage: ledgerbot pause RULE --config FILE

Pauses a rule of the running bot (POST /rules/RULE/pause on its ops API, with http.token):
its new events are not evaluated, and the checkpoint stays where the pause began, so nothing
is lost (a restart starts every rule active and replays from there). Idempotent.

Options:
  --config FILE  the bot config (default ./bot.config.yaml); needs an http section
  -h, --help     show this help

Exit status: 0 paused, 1 when the bot is not reachable or refuses (unknown rule, a rule
disabled in its file), 2 for usage and config errors (no http section).
`,
  resume: `Usage: ledgerbot resume RULE --config FILE

Resumes a paused rule of the running bot (POST /rules/RULE/resume on its ops API, with
http.token): it takes part in the live evaluation again at once, and the events that arrived
while it was paused are evaluated now, for that rule only. Idempotent.

Options:
  --config FILE  the bot config (default ./bot.config.yaml); needs an http section
  -h, --help     show this help

Exit status: 0 resumed, 1 when the bot is not reachable or refuses (unknown rule, a rule
disabled in its file), 2 for usage and config errors (no http section).
`,
};

type RuleBody = {
  readonly rule?: {
    readonly id?: string;
    readonly state?: string;
    readonly pausedAtOffset?: number;
  };
};

function ruleCommand(action: Action): CliCommand {
  return {
    name: action,
    summary:
      action === 'pause'
        ? 'pause a rule of the running bot (its events are held, not lost)'
        : 'resume a paused rule of the running bot (its held events are evaluated)',
    run: async (args: string[], io: CliIo) => {
      const { values, positionals } = parseArgs({
        args,
        options: {
          config: { type: 'string', default: 'bot.config.yaml' },
          help: { type: 'boolean', short: 'h' },
        },
        allowPositionals: true,
        strict: true,
      });
      if (values.help === true) {
        io.out(HELP[action]);
        return 0;
      }
      const [ruleId, ...extra] = positionals;
      if (ruleId === undefined || ruleId.trim() === '') {
        throw new UsageError(`${action} needs the id of the rule: ledgerbot ${action} RULE`);
      }
      if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
      const config = await readConfig(values.config);
      const client = requireOpsClient(config, action);
      const body = (await callOps(
        client,
        'POST',
        `/rules/${encodeURIComponent(ruleId)}/${action}`,
        200,
      )) as RuleBody | null;
      const rule = body?.rule;
      const state = rule?.state ?? 'unknown';
      io.out(
        action === 'pause'
          ? `rule ${ruleId} is ${state}${rule?.pausedAtOffset === undefined ? '' : ` (since offset ${rule.pausedAtOffset})`}: its new events are held until \`ledgerbot resume ${ruleId}\`\n`
          : `rule ${ruleId} is ${state}${state === 'resuming' ? ': the events of its pause are being evaluated' : ''}\n`,
      );
      return 0;
    },
  };
}

export const pauseCommand: CliCommand = ruleCommand('pause');
export const resumeCommand: CliCommand = ruleCommand('resume');
