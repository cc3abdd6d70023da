import { configOption } from '../cli-options.js';
import { defineCommand } from '../define-command.js';
import { expectStatus, isStatus, requireOpsClient } from '../ops-client.js';
import { readConfigFor } from '../compose/read-config.js';

type Version = { readonly id?: string; readonly revision?: number };
type ReloadBody = {
  readonly diff?: {
    readonly added?: readonly Version[];
    readonly removed?: readonly Version[];
    readonly changed?: readonly Version[];
    readonly unchanged?: number;
  };
  readonly errors?: readonly string[];
};

export const reloadCommand = defineCommand({
  name: 'reload',
  summary: "re-read the running bot's rule files (all or nothing) and print what changed",
  usage: `reload --config FILE`,
  description: `Asks the running bot to re-read its rule files (POST /rules/reload on its ops API, with
http.token), as SIGHUP or saving a rule file does: all of them are swapped in if all are
valid, none otherwise (the old rules keep running). Prints what changed, or every problem.`,
  options: {
    ...configOption('; needs an http section'),
  },
  footer: `Exit status: 0 reloaded, 1 when a rule file is invalid or the bot is not reachable, 2 for
usage and config errors (no http section).`,
  run: async ({ values }, io) => {
    const config = await readConfigFor(['http'], values.config);
    const client = requireOpsClient(config, 'reload');
    const response = await client.request('POST', '/rules/reload');
    const body = response.body as ReloadBody | null;
    if (isStatus(response, 422)) {
      const errors = body?.errors ?? [];
      io.err(
        `ledgerbot: the rules were not reloaded, the old ones keep running; ${errors.length} problem(s):\n${errors.map((e) => `  ${e}\n`).join('')}`,
      );
      return 1;
    }
    expectStatus(response, 200, 'POST', '/rules/reload');
    const diff = body?.diff ?? {};
    const list = (label: string, v: readonly Version[] | undefined): string[] =>
      v === undefined || v.length === 0
        ? []
        : [`${label} ${v.map((r) => `${r.id ?? '?'}@${r.revision ?? '?'}`).join(', ')}`];
    const parts = [
      ...list('added', diff.added),
      ...list('removed', diff.removed),
      ...list('changed', diff.changed),
    ];
    io.out(
      parts.length === 0
        ? `rules reloaded: no change (${diff.unchanged ?? 0} rule(s))\n`
        : `rules reloaded: ${parts.join('; ')}; ${diff.unchanged ?? 0} unchanged\n`,
    );
    return 0;
  },
});
