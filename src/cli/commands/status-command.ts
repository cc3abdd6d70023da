import { configOption } from '../cli-options.js';
import { defineCommand } from '../define-command.js';
import { isStatus, OpsApiError, opsClientFor, opsErrorOf } from '../ops-client.js';
import { readConfigFor } from '../compose/read-config.js';
import { formatStatus, type StatusDocument } from '../present/status-text.js';
import { UsageError } from '../usage-error.js';

export const statusCommand = defineCommand({
  name: 'status',
  summary: "print the running bot's status: rules, checkpoint, lag, in flight, last intents",
  usage: `status --config FILE [--json]`,
  description: `Asks the running bot (the ops API at the config's http.host and http.port, with http.token if
set) for its status and prints it: lifecycle and stream, checkpoint and lag, in-flight work,
the rules and their state (active or paused), and the latest intents with their outcomes.`,
  options: {
    ...configOption(),
    json: { type: 'boolean', default: false, help: 'print the /status document as it is' },
  },
  footer: `Exit status: 0 when the bot answered, 1 when it is not reachable, 2 for usage and config errors.`,
  run: async ({ values }, io) => {
    const config = await readConfigFor(['http'], values.config);
    const client = opsClientFor(config);
    if (client === undefined) {
      throw new UsageError(
        `${config.file} has no http section, so the bot serves no status; add http: { port: 9464 } and restart it`,
      );
    }
    let response;
    try {
      response = await client.request('GET', '/status');
    } catch (err) {
      if (err instanceof OpsApiError) {
        io.err(`ledgerbot: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
    if (!isStatus(response, 200)) {
      io.err(`ledgerbot: ${opsErrorOf('GET', '/status', response).message}\n`);
      return 1;
    }
    const status = response.body as StatusDocument;
    io.out(values.json === true ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
    return 0;
  },
});
