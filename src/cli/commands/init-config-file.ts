import {
  EMBEDDED_ALIASES,
  EXAMPLE_ACTING_ALIAS,
  STARTER_PATHS,
  STATE_DIR,
} from './init-starter-files.js';

// The bot.config.yaml `ledgerbot init` writes: commented for someone who has never seen one.
// Its `# yaml-language-server` line points at the copy of the config schema init writes.

/** What the config is written for: the embedded sandbox, or a participant at a URL. */
export type InitLedger =
  | { readonly kind: 'embedded' }
  | {
      readonly kind: 'url';
      readonly url: string;
      /** alias → party id (or a `${VAR}` reference), in the order given. */
      readonly parties: readonly (readonly [string, string])[];
    };

/** The environment variable that fills the example alias when no `--party` names it. */
export const ACTING_PARTY_ENV = 'APPROVER_PARTY';
/** The environment variable the static token comes from. */
export const TOKEN_ENV = 'LEDGER_TOKEN';

/** The environment variables the written config reads without a default (must be set). */
export function requiredEnv(ledger: InitLedger): string[] {
  if (ledger.kind === 'embedded') return [];
  const hasAlias = ledger.parties.some(([alias]) => alias === EXAMPLE_ACTING_ALIAS);
  return hasAlias ? [TOKEN_ENV] : [TOKEN_ENV, ACTING_PARTY_ENV];
}

export function botConfigText(ledger: InitLedger): string {
  return [
    header(ledger),
    ledger.kind === 'embedded' ? embeddedLedger() : urlLedger(ledger.url),
    ledger.kind === 'embedded' ? '' : partiesSection(ledger.parties),
    common(ledger.kind === 'embedded'),
  ].join('');
}

function header(ledger: InitLedger): string {
  const env = requiredEnv(ledger);
  const lines = [
    `# yaml-language-server: $schema=${STARTER_PATHS.configSchema}`,
    `# ledgerbot configuration, written by \`ledgerbot init${ledger.kind === 'embedded' ? ' --embedded' : ''}\`.`,
    ledger.kind === 'embedded'
      ? '# The ledger is an embedded sandbox: it starts inside the bot, with the starter model in\n' +
        `# ${STARTER_PATHS.model}, so nothing needs to be installed or connected to.`
      : '# The bot connects to a participant (a Canton node) through its JSON Ledger API.',
    '#',
    ...(env.length > 0
      ? [
          `# Set ${env.join(' and ')} in the environment first:`,
          ...env.map((name) => `#   ${`export ${name}=...`.padEnd(50)}# ${envPurpose(name)}`),
          '# then:',
        ]
      : ['# Try it:']),
    '#   npx ledgerbot validate --config bot.config.yaml   # check this file and the rules',
    '#   npx ledgerbot test tests                          # run the rule unit tests',
    '#   npx ledgerbot run --config bot.config.yaml        # run the bot (Ctrl-C stops it)',
    '#',
    '# Values may read the environment as ${VAR} or ${VAR:-default}, so secrets stay out of this',
    '# file. Durations have a unit: 250ms, 30s, 5m, 2h, 7d. Relative paths are relative to this',
    '# file. Every setting is described in the reference config, bot.config.yaml in the ledgerbot',
    '# package (node_modules/ledgerbot/bot.config.yaml once installed).',
    '',
    '',
  ];
  return lines.join('\n');
}

function envPurpose(name: string): string {
  return name === TOKEN_ENV
    ? 'the access token for the Ledger API'
    : `the party id of the \`${EXAMPLE_ACTING_ALIAS}\` alias`;
}

function embeddedLedger(): string {
  return `ledger:
  # To use a real participant later, replace \`embedded:\` with its JSON Ledger API URL and auth:
  #   url: https://participant.example.com
  #   auth: { type: static, token: "\${${TOKEN_ENV}}" }
  # and map the aliases to party ids under \`parties:\` (\`ledgerbot init --url URL --party
  # alias=id\` writes such a file).
  embedded:
    models: [${STARTER_PATHS.model}]
    # Party aliases the sandbox allocates at start. Rules refer to parties by these aliases,
    # never by their ids.
    parties: [${EMBEDDED_ALIASES.join(', ')}]
  # The Ledger API user the bot submits as; the sandbox creates it, able to act as the parties.
  userId: ledgerbot

`;
}

function urlLedger(url: string): string {
  return `ledger:
  # The participant's JSON Ledger API.
  url: ${yamlString(url)}
  # The Ledger API user the bot submits as. It needs the CanActAs right for every party the
  # rules act as, and CanReadAs for the parties they read as (the participant's operator grants
  # them).
  userId: ledgerbot
  auth:
    # The access token is read from the environment variable ${TOKEN_ENV}: \`validate\` and
    # \`run\` stop with a message naming it when it is not set.
    type: static
    token: \${${TOKEN_ENV}}
    # Other ways to authenticate:
    # type: file            # a token file, re-read whenever it changes (e.g. a mounted secret)
    # path: /var/run/secrets/ledger/token
    #
    # type: oauth2          # OAuth2 client credentials; tokens are fetched and refreshed
    # tokenUrl: https://idp.example.com/oauth/token
    # clientId: ledgerbot
    # clientSecret: \${LEDGER_CLIENT_SECRET}
    # audience: https://daml.com/jwt/aud/participant/participant1::1220...
    #
    # type: none            # a participant without auth (a local test setup)
  # For https:// with a private certificate authority, or mutual TLS:
  # tls:
  #   caFile: /etc/ledgerbot/ca.pem

`;
}

function partiesSection(parties: readonly (readonly [string, string])[]): string {
  const lines = [
    '# Party aliases (alias: party id). Rules use the aliases, so the same rules run against any',
    '# participant: only this list changes.',
    'parties:',
    ...parties.map(([alias, id]) => `  ${alias}: ${yamlString(id)}`),
  ];
  if (!parties.some(([alias]) => alias === EXAMPLE_ACTING_ALIAS)) {
    lines.push(
      `  # The example rule (${STARTER_PATHS.rule}) acts as \`${EXAMPLE_ACTING_ALIAS}\`: write its party id`,
      `  # here, or set ${ACTING_PARTY_ENV}. Remove it together with the example rule.`,
      `  ${EXAMPLE_ACTING_ALIAS}: \${${ACTING_PARTY_ENV}}`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

function common(embedded: boolean): string {
  // The embedded sandbox keeps its ledger in memory, but the state directory outlives the run.
  const sandboxNote = embedded
    ? `  # The embedded sandbox starts with an empty ledger on every run, so the bot begins on it
  # afresh each time: the previous run's checkpoint here is set aside.
`
    : '';
  return `# The rule files: every *.yaml file in this folder. Rule tests live in tests/, not here.
rules: rules/

state:
  # The bot's own state (SQLite: the checkpoint, the intent journal and the dead letters).
  # .gitignore keeps it out of git; every running copy of the bot needs its own directory.
${sandboxNote}  dir: ${STATE_DIR}

# Where the bot starts reading: on its first run at the ledger end (events from before are not
# acted on), afterwards where it stopped (the checkpoint in the state directory).
start: checkpoint

submission:
  # How long to wait for the ledger to confirm a command before sending it again. A command is
  # never executed twice: the resubmission carries the same command id.
  completionTimeout: 30s
  retry:
    # Temporary failures (a busy ledger, a lost connection) are retried this many times ...
    maxAttempts: 10
    # ... for at most this long; then the command becomes a dead letter, for a person to look
    # at: \`ledgerbot dead-letters list --config bot.config.yaml\`.
    deadline: 1h

# Health checks and Prometheus metrics: uncomment to serve /livez, /readyz, /metrics and /status.
# http:
#   port: 9464
#   host: 127.0.0.1

log:
  # trace | debug | info | warn | error | fatal | silent
  level: info
  # The log is JSON lines, or one readable line per entry on a terminal. \`pretty: true\` or
  # \`pretty: false\` decides it for every output.
`;
}

/**
 * A YAML scalar for a value the user typed: single-quoted, so `#`, `:` and a leading `*` or `&`
 * stay text. `${VAR}` inside is still filled in from the environment (the config loader reads
 * values after YAML parsing).
 */
export function yamlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}
