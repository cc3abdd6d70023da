import { parseArgs } from 'node:util';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import type { SandboxAuthMode } from '../../sandbox/server/sandbox-auth.js';
import { startSandbox } from '../../sandbox/start-sandbox.js';
import type { CliCommand } from '../cli-command.js';
import type { CliIo } from '../cli-io.js';
import { durationOption, integerOption, portOption } from '../cli-options.js';
import { untilSignal } from '../until-signal.js';
import { UsageError } from '../usage-error.js';

const USAGE = `Usage: ledgerbot sandbox [options]

Starts the embedded participant (JSON Ledger API v2 on HTTP and websockets). Prints
\`sandbox ready URL participant=ID\` once it listens, then \`party ALIAS ID\` for each party
allocated (--party, and the parties of --user).

Options:
  --port N             port to listen on (default 7575; 0 picks a free one)
  --host H             address to bind (default 127.0.0.1)
  --model FILE         a model file to load (repeatable)
  --party HINT         a party to allocate, e.g. Alice (repeatable)
  --user ID:P1,P2      a user that can act as parties P1, P2 (repeatable)
  --auth MODE          none (default) or hs256:SECRET
  --seed N             seed for ids and fault injection
  --max-dedup D        maximum deduplication duration (default 7d)
  --idle-timeout D     close websockets and connections quiet for D (default 60s, as
                       Canton's pekko-http; 0 turns it off)
  -h, --help           show this help
`;

function parseAuth(text: string | undefined): SandboxAuthMode {
  if (text === undefined || text === 'none') return 'none';
  if (text.startsWith('hs256:') && text.length > 'hs256:'.length) {
    return { hs256: text.slice('hs256:'.length) };
  }
  throw new UsageError('--auth must be none or hs256:SECRET');
}

export const sandboxCommand: CliCommand = {
  name: 'sandbox',
  summary: 'start the embedded participant (JSON Ledger API v2) for demos and tests',
  run: async (args: string[], io: CliIo) => {
    const { values } = parseArgs({
      args,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        model: { type: 'string', multiple: true },
        party: { type: 'string', multiple: true },
        user: { type: 'string', multiple: true },
        auth: { type: 'string' },
        seed: { type: 'string' },
        'max-dedup': { type: 'string' },
        'idle-timeout': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help === true) {
      io.out(USAGE);
      return 0;
    }
    const port = values.port === undefined ? 7575 : portOption(values.port);
    const seed =
      values.seed === undefined ? undefined : integerOption('--seed', values.seed, 0, 0xffff_ffff);
    const maxDedupMs =
      values['max-dedup'] === undefined
        ? undefined
        : durationOption('--max-dedup', values['max-dedup']);
    const idle = values['idle-timeout'];
    const idleTimeoutMs =
      idle === undefined ? undefined : idle === '0' ? 0 : durationOption('--idle-timeout', idle);
    const auth = parseAuth(values.auth);
    let sandbox;
    try {
      sandbox = await startSandbox({
        port,
        ...(values.host === undefined ? {} : { host: values.host }),
        models: values.model ?? [],
        parties: values.party ?? [],
        users: values.user ?? [],
        auth,
        ...(seed === undefined ? {} : { seed }),
        ...(maxDedupMs === undefined ? {} : { maxDedup: maxDedupMs }),
        ...(idleTimeoutMs === undefined ? {} : { idleTimeout: idleTimeoutMs }),
      });
    } catch (err) {
      // Bad models (file:line:col), users or ports are configuration errors: exit 2.
      if (err instanceof LedgerbotError) throw new UsageError(err.message, { cause: err });
      throw err;
    }
    // The ready line comes first and stays as it is: scripts wait for it. Then one line per
    // allocated party (from --party and --user), so a client knows the ids to act as.
    io.out(`sandbox ready ${sandbox.url} participant=${sandbox.participantId}\n`);
    for (const [alias, id] of Object.entries(sandbox.parties)) io.out(`party ${alias} ${id}\n`);
    await untilSignal();
    await sandbox.stop();
    return 0;
  },
};
