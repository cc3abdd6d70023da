import { BOT_CONFIG_DEFAULTS as D, BOT_CONFIG_SCHEMA } from './bot-config-schema.js';

/**
 * `${VAR}` or `${VAR:-default}` somewhere in a value: the loader fills it in from the
 * environment before it validates, so an editor cannot check such a value, only accept it.
 */
export const ENV_REFERENCE = {
  type: 'string',
  pattern: '\\$\\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\\}',
  description: 'An environment variable reference, ${VAR} or ${VAR:-default}, filled in at load.',
} as const;

type Schema = { [key: string]: unknown };

/**
 * What each key means, for an editor's hover (the commented bot.config.yaml says more). Keyed by
 * the path of the key; a key of a `oneOf` branch (ledger.auth.token) is described in every
 * branch that has it.
 */
export const CONFIG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  ledger: 'The participant: its JSON Ledger API (`url`) or an in-process sandbox (`embedded`).',
  'ledger.url': "The participant's JSON Ledger API, e.g. https://participant.example.com.",
  'ledger.embedded': 'Start the sandbox in-process instead of connecting to `url`.',
  'ledger.embedded.models': 'Sandbox model files to load (relative to this file).',
  'ledger.embedded.parties': 'Party aliases allocated at start (leave them out of `parties`).',
  'ledger.userId': 'The Ledger API user the bot submits as (CanActAs/CanReadAs its parties).',
  'ledger.auth': 'How the bot gets its access token: none, static, file or oauth2.',
  'ledger.auth.type': 'none | static | file | oauth2',
  'ledger.auth.token': 'The access token (a secret: write ${LEDGER_TOKEN}).',
  'ledger.auth.path': 'A token file, re-read whenever it changes.',
  'ledger.auth.tokenUrl': "The identity provider's token endpoint (client credentials).",
  'ledger.auth.clientId': 'The OAuth2 client id.',
  'ledger.auth.clientSecret': 'The OAuth2 client secret (a secret: write ${LEDGER_CLIENT_SECRET}).',
  'ledger.auth.audience': 'The audience to ask the token for.',
  'ledger.auth.scope': 'The scope to ask the token for.',
  'ledger.auth.clientAuth': 'How the client secret is sent: basic (default) or body.',
  'ledger.tls': 'PEM files for https:// with a private CA, or mutual TLS (certFile with keyFile).',
  'ledger.apiVersion': `The spec generation the participant speaks: "3.5" or "3.4" (default ${D.apiVersion}).`,
  'ledger.pingInterval': `Websocket ping period (Canton closes a socket quiet for 60 s; default ${D.pingInterval}); 0s: none.`,
  'ledger.packages':
    'Daml packages the rules are type-checked against, besides those the participant lists: DAR or DALF files, or directories of them (relative to this file).',
  'ledger.startTimeout': 'How long `run` waits at start for a participant that does not answer.',
  parties: 'Party aliases that rule files use (alias: party id).',
  rules: 'A directory of rule files, or a list of paths (relative to this file).',
  tests: `Rule tests \`ledgerbot test\` runs without paths: a directory or a list (default ${D.testsDir}/).`,
  state:
    'Where the bot keeps its state: SQLite in `dir`, or PostgreSQL with `postgres`; every replica needs its own directory.',
  'state.dir': `The state directory (default ${D.stateDir}): the SQLite journal, unless \`postgres\` is set, and the caches (package archives, compiled rules) either way.`,
  'state.postgres':
    'Keep the journal in PostgreSQL instead of state.dir (which still holds the caches).',
  'state.postgres.url':
    'postgres://user:password@host:port/database (a secret: write ${LEDGERBOT_PG_URL}).',
  'state.postgres.schema': `The schema the bot's tables live in, created if missing (default ${D.pgSchema}).`,
  'state.postgres.poolSize': `Connections the bot opens (default ${D.pgPoolSize}, at least 2).`,
  'state.retention': `How long finished intents stay in the journal (default ${D.retention}).`,
  start: `Where a bot without a checkpoint begins: ledger-end, begin, or an offset (default ${D.start}, the older name of ledger-end). With a checkpoint it resumes from it (run --reset-checkpoint to begin here again).`,
  submission: 'How commands are submitted.',
  'submission.maxInFlight': `Submissions in flight at once, over all rules (default ${D.maxInFlight}).`,
  'submission.completionTimeout': `How long to wait for a completion before resubmitting (same commandId; default ${D.completionTimeout}).`,
  'submission.retry':
    "The retry policy for retryable errors of every rule that states none, field by field: a rule's own `retry:` fields win, the others come from here (and a field left out here has the library's default, given below).",
  'submission.retry.maxAttempts': `Attempts before dead-lettering (default ${D.retry.maxAttempts}).`,
  'submission.retry.initialDelay': `The first backoff (default ${D.retry.initialDelay}).`,
  'submission.retry.maxDelay': `The longest backoff (default ${D.retry.maxDelay}).`,
  'submission.retry.deadline': `After this long an intent is dead-lettered, whatever the attempts (default ${D.retry.deadline}).`,
  'submission.dedup': 'Deduplication: offset (default; anchored at the event) or duration.',
  'submission.dedup.mode': 'offset | duration',
  'submission.dedup.fallback': `With mode offset: the duration used once the offset is pruned (default ${D.dedupFallback}).`,
  'submission.dedup.value': 'With mode duration: the deduplication duration.',
  fleet:
    'Share the rules with the other instances that have the same `state.postgres` schema and fleet name: each rule is run by one of them at a time, under a lease (requires `state.postgres`).',
  'fleet.name': 'The fleet (letters, digits, `.`, `_`, `-`).',
  'fleet.leasePeriod': `How long a member keeps its rules without renewing them (renewed every third; default ${D.leasePeriod}, at least 300ms); a dead member's rules are taken over within two periods.`,
  http: 'The ops server and the console (/): /livez, /readyz, /metrics, /status. Leave out for none.',
  'http.port': 'Port (0 picks a free one).',
  'http.host': `Address to bind (default ${D.httpHost}).`,
  'http.token': 'Bearer token for /status, /rules/* and /dead-letters* (a secret: use ${ENV}).',
  'http.readyMaxLag': `/readyz fails while the bot lags more offsets than this (default ${D.readyMaxLag}).`,
  'http.allowedHosts':
    'Without a token, a server on 127.0.0.1 answers only requests whose Host is localhost or 127.x.x.x (no DNS rebinding); these host names (no port) too, e.g. behind a reverse proxy (by default none).',
  'http.readOnly':
    'true: the ops API and the console only look; pause, resume, retry, drop, reload and run-slot answer 403 (default false).',
  log: 'Logging.',
  'log.level': `trace | debug | info | warn | error | fatal | silent (default ${D.logLevel})`,
  'log.pretty': 'Human-readable lines instead of JSON (default: only on a terminal).',
};

/** The schema with CONFIG_DESCRIPTIONS on its keys (`path`: the keys above `node`). */
function describeKeys(node: unknown, path: string): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (Array.isArray(node)) return node.map((n) => describeKeys(n, path));
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) {
    if (key === 'properties' && value !== null && typeof value === 'object') {
      out[key] = Object.fromEntries(
        Object.entries(value as Schema).map(([k, v]) => {
          const at = path === '' ? k : `${path}.${k}`;
          const described = describeKeys(v, at) as Schema;
          const text = CONFIG_DESCRIPTIONS[at];
          return [k, text === undefined ? described : { description: text, ...described }];
        }),
      );
    } else {
      out[key] = SUBSCHEMA_LISTS.has(key) || key === 'items' ? describeKeys(value, path) : value;
    }
  }
  return out;
}

const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties']);
const SUBSCHEMA_LISTS = new Set(['oneOf', 'anyOf', 'allOf']);
const SUBSCHEMAS = new Set(['items', 'additionalProperties', 'not']);

/**
 * A value an environment reference may stand for: a number, a boolean, or text with a pattern
 * or a list of allowed values. (Plain text accepts `${VAR}` as it is; `const` tags of `oneOf`
 * branches are not wrapped, so the branches stay exclusive.)
 */
function isCheckedScalar(s: Schema): boolean {
  const types = [s.type].flat();
  if (types.some((t) => t === 'integer' || t === 'number' || t === 'boolean')) return true;
  return types.includes('string') && (s.pattern !== undefined || s.enum !== undefined);
}

/** The schema with `anyOf: [it, ENV_REFERENCE]` around every value checked beyond "text". */
function allowEnvReferences(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) {
    if (key === 'discriminator') continue; // ajv's OpenAPI keyword; oneOf says the same
    if (SUBSCHEMA_MAPS.has(key) && value !== null && typeof value === 'object') {
      out[key] = Object.fromEntries(
        Object.entries(value as Schema).map(([k, v]) => [k, allowEnvReferences(v)]),
      );
    } else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map(allowEnvReferences);
    } else if (SUBSCHEMAS.has(key)) {
      out[key] = allowEnvReferences(value);
    } else {
      out[key] = value;
    }
  }
  if (out.enum === undefined && out.type === undefined) return out;
  if (!isCheckedScalar(out) && !(out.enum !== undefined && out.type === undefined)) return out;
  const { default: fallback, description, ...checked } = out;
  return {
    anyOf: [checked, ENV_REFERENCE],
    ...(description === undefined ? {} : { description }),
    ...(fallback === undefined ? {} : { default: fallback }),
  };
}

/**
 * The published schema of `bot.config.yaml` (schema/bot-config.schema.json), for editors: the
 * loader's schema (src/runtime/config/bot-config-schema.ts, the single source of truth) with
 * `${VAR}` allowed wherever the loader would accept it.
 */
export function botConfigSchema(): object {
  const { $id, ...rest } = BOT_CONFIG_SCHEMA;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id,
    title: 'ledgerbot configuration (bot.config.yaml; see the commented bot.config.yaml)',
    ...(allowEnvReferences(describeKeys(rest, '')) as object),
  };
}

/** The published schema file's exact text. */
export function renderBotConfigSchema(): string {
  return `${JSON.stringify(botConfigSchema(), null, 2)}\n`;
}
