import type { CliCommand } from '../cli-command.js';
import { configOption } from '../cli-options.js';
import { defineCommand } from '../define-command.js';
import { expectStatus, forwardedTo, requireOpsClient } from '../ops-client.js';
import { formatForwarded } from '../present/forwarded-text.js';
import { readConfigFor } from '../compose/read-config.js';
import { UsageError } from '../usage-error.js';

type Action = 'pause' | 'resume';

/** What each action does, for its help. */
const DESCRIPTION: Record<Action, string> = {
  pause: `Pauses a rule of the running bot (POST /rules/RULE/pause on its ops API, with http.token):
its new events are not evaluated, and the checkpoint stays where the pause began, so nothing
is lost (a restart starts every rule active and replays from there). Idempotent.`,
  resume: `Resumes a paused rule of the running bot (POST /rules/RULE/resume on its ops API, with
http.token): it takes part in the live evaluation again at once, and the events that arrived
while it was paused are evaluated now, for that rule only. Idempotent.`,
};

type RuleBody = {
  readonly rule?: {
    readonly id?: string;
    readonly state?: string;
    readonly pausedAtOffset?: number;
  };
};

function ruleCommand(action: Action): CliCommand {
  return defineCommand({
    name: action,
    summary:
      action === 'pause'
        ? 'pause a rule of the running bot (its events are held, not lost)'
        : 'resume a paused rule of the running bot (its held events are evaluated)',
    usage: `${action} RULE --config FILE`,
    description: DESCRIPTION[action],
    options: {
      ...configOption('; needs an http section'),
    },
    positionals: true,
    footer: `Exit status: 0 ${action === 'pause' ? 'paused' : 'resumed'} (on a fleet member that does not run the rule: forwarded to its
owner), 1 when the bot is not reachable or refuses (unknown rule, a rule disabled in its file), 2
for usage and config errors (no http section).`,
    run: async ({ values, positionals }, io) => {
      const [ruleId, ...extra] = positionals;
      if (ruleId === undefined || ruleId.trim() === '') {
        throw new UsageError(`${action} needs the id of the rule: ledgerbot ${action} RULE`);
      }
      if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
      const config = await readConfigFor(['http'], values.config);
      const client = requireOpsClient(config, action);
      const path = `/rules/${encodeURIComponent(ruleId)}/${action}`;
      const response = await client.request('POST', path);
      // A fleet member that does not run the rule: recorded fleet-wide, and posted to its owner.
      const forwarded = forwardedTo(response);
      if (forwarded !== undefined) {
        io.out(
          formatForwarded(
            `${action} of rule ${ruleId}`,
            forwarded.owner,
            `by the fleet member at ${client.baseUrl}`,
          ),
        );
        return 0;
      }
      const body = expectStatus(response, 200, 'POST', path) as RuleBody | null;
      const rule = body?.rule;
      const state = rule?.state ?? 'unknown';
      io.out(
        action === 'pause'
          ? `rule ${ruleId} is ${state}${rule?.pausedAtOffset === undefined ? '' : ` (since offset ${rule.pausedAtOffset})`}: its new events are held until \`ledgerbot resume ${ruleId}\`\n`
          : `rule ${ruleId} is ${state}${state === 'resuming' ? ': the events of its pause are being evaluated' : ''}\n`,
      );
      return 0;
    },
  });
}

export const pauseCommand: CliCommand = ruleCommand('pause');
export const resumeCommand: CliCommand = ruleCommand('resume');
