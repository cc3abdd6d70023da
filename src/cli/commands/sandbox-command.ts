import { DEFAULTS } from '../../core/defaults.js';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import type { SandboxAuthMode } from '../../sandbox/server/sandbox-auth.js';
import { startSandbox } from '../../sandbox/start-sandbox.js';
import { defineCommand } from '../define-command.js';
import { durationOption, integerOption, portOption } from '../cli-options.js';
import { untilSignal } from '../until-signal.js';
import { UsageError } from '../usage-error.js';

function parseAuth(text: string | undefined): SandboxAuthMode {
  if (text === undefined || text === 'none') return 'none';
  if (text.startsWith('hs256:') && text.length > 'hs256:'.length) {
    return { hs256: text.slice('hs256:'.length) };
  }
  throw new UsageError('--auth must be none or hs256:SECRET');
}

export const sandboxCommand = defineCommand({
  name: 'sandbox',
  summary: 'start the embedded participant (JSON Ledger API v2) for demos and tests',
  usage: `sandbox [options]`,
  description: `Starts the embedded participant (JSON Ledger API v2 on HTTP and websockets). Its
packages come from --dar files (served as they are; their templates can be created and archived)
and --model files (behaviour, and packages of their own). Prints \`sandbox ready URL
participant=ID\` once it listens, then \`party ALIAS ID\` for each party allocated (--party, and
the parties of --user).`,
  options: {
    port: {
      type: 'string',
      value: 'N',
      help: `port to listen on (default ${DEFAULTS.cli.sandboxPort}; 0 picks a free one)`,
    },
    host: { type: 'string', value: 'H', help: 'address to bind (default 127.0.0.1)' },
    dar: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'a DAR whose packages to register (repeatable): served by\nGET /v2/packages, its templates usable (docs/sandbox.md)',
    },
    model: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'a model file to load (repeatable)',
    },
    party: {
      type: 'string',
      multiple: true,
      value: 'HINT',
      help: 'a party to allocate, e.g. Alice (repeatable)',
    },
    user: {
      type: 'string',
      multiple: true,
      value: 'ID:P1,P2',
      help: 'a user that can act as parties P1, P2 (repeatable)',
    },
    auth: { type: 'string', value: 'MODE', help: 'none (default) or hs256:SECRET' },
    seed: { type: 'string', value: 'N', help: 'seed for ids and fault injection' },
    'max-dedup': {
      type: 'string',
      value: 'D',
      help: 'maximum deduplication duration (default 7d)',
    },
    'idle-timeout': {
      type: 'string',
      value: 'D',
      help: "close websockets and connections quiet for D (default 60s, as\nCanton's pekko-http; 0 turns it off)",
    },
  },
  run: async ({ values }, io) => {
    const port = values.port === undefined ? DEFAULTS.cli.sandboxPort : portOption(values.port);
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
        dars: values.dar ?? [],
        models: values.model ?? [],
        parties: values.party ?? [],
        users: values.user ?? [],
        auth,
        ...(seed === undefined ? {} : { seed }),
        ...(maxDedupMs === undefined ? {} : { maxDedup: maxDedupMs }),
        ...(idleTimeoutMs === undefined ? {} : { idleTimeout: idleTimeoutMs }),
      });
    } catch (err) {
      // Bad DARs (the file named), models (file:line:col), users or ports are configuration
      // errors: exit 2.
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
});
