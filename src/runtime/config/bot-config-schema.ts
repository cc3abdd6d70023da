/**
 * The JSON Schema of `bot.config.yaml` as written by people (before defaults, durations as
 * text, paths relative). The source of truth for validation; `loadBotConfig` turns a valid
 * document into a `BotConfig`.
 */
import { DEFAULTS } from '../../core/defaults.js';
import { formatDuration } from '../../core/duration.js';
import { RULE_LIMITS } from '../../rules/rule-language.js';

export const DURATION_PATTERN = '^(?:\\d+(?:\\.\\d+)?(?:ms|s|m|h|d|w))+$';
export const ALIAS_PATTERN = '^[A-Za-z][A-Za-z0-9_-]*$';
/** A PostgreSQL schema name the store accepts: lower case, no `pg_` prefix, at most 63. */
export const PG_SCHEMA_PATTERN = '^(?!pg_)[a-z_][a-z0-9_]{0,62}$';
/** A host name as a `Host` header names it, without the port (`console.example.com`). */
/** A fleet's name: what instances sharing a schema's rules agree on. */
export const FLEET_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$';
export const HOST_NAME_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$';
export const START_KEYWORDS = ['checkpoint', 'ledger-end', 'begin'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Fields whose values are never shown in an error message. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['token', 'clientSecret']);

const duration = { type: 'string', pattern: DURATION_PATTERN } as const;
const text = { type: 'string', minLength: 1 } as const;
const alias = { type: 'string', pattern: ALIAS_PATTERN } as const;

/**
 * The config file's defaults as written in it (durations as text): DEFAULTS (src/core/defaults.ts)
 * rendered, so the file, the published schema and the library cannot disagree.
 */
export const BOT_CONFIG_DEFAULTS = {
  apiVersion: DEFAULTS.ledger.apiVersion,
  pingInterval: formatDuration(DEFAULTS.ledger.pingIntervalMs),
  stateDir: DEFAULTS.stateDir,
  pgSchema: DEFAULTS.postgres.schema,
  pgPoolSize: DEFAULTS.postgres.poolSize,
  leasePeriod: formatDuration(DEFAULTS.fleet.leasePeriodMs),
  testsDir: DEFAULTS.testsDir,
  retention: formatDuration(DEFAULTS.retentionMs),
  start: DEFAULTS.start,
  maxInFlight: DEFAULTS.submission.maxInFlight,
  completionTimeout: formatDuration(DEFAULTS.submission.completionTimeoutMs),
  retry: {
    maxAttempts: DEFAULTS.retry.maxAttempts,
    initialDelay: formatDuration(DEFAULTS.retry.initialDelayMs),
    maxDelay: formatDuration(DEFAULTS.retry.maxDelayMs),
    deadline: formatDuration(DEFAULTS.retry.deadlineMs),
  },
  dedupFallback: formatDuration(DEFAULTS.submission.dedupFallbackMs),
  httpHost: DEFAULTS.ops.host,
  readyMaxLag: DEFAULTS.ops.readyMaxLag,
  logLevel: DEFAULTS.logLevel,
} as const;

/**
 * One branch of a union that ajv's `discriminator` picks by `tag`: the tag's constant, the
 * branch's own fields, and no other key.
 */
function variant(
  tag: string,
  value: string,
  fields: Readonly<Record<string, object>> = {},
  required: readonly string[] = [],
): object {
  return {
    properties: { [tag]: { const: value }, ...fields },
    ...(required.length === 0 ? {} : { required }),
    additionalProperties: false,
  };
}

const authSchema = {
  type: 'object',
  required: ['type'],
  discriminator: { propertyName: 'type' },
  oneOf: [
    variant('type', 'none'),
    variant('type', 'static', { token: text }, ['token']),
    variant('type', 'file', { path: text }, ['path']),
    variant(
      'type',
      'oauth2',
      {
        tokenUrl: text,
        clientId: text,
        clientSecret: text,
        audience: text,
        scope: text,
        clientAuth: { enum: ['basic', 'body'] },
      },
      ['tokenUrl', 'clientId', 'clientSecret'],
    ),
  ],
} as const;

const dedupSchema = {
  type: 'object',
  required: ['mode'],
  discriminator: { propertyName: 'mode' },
  oneOf: [
    variant('mode', 'offset', { fallback: duration }),
    variant('mode', 'duration', { value: duration }, ['value']),
  ],
  default: { mode: 'offset' },
} as const;

/** The ajv options the config is checked with (over `schemaChecker`'s). */
export const BOT_CONFIG_AJV_OPTIONS = {
  useDefaults: true,
  coerceTypes: true,
  discriminator: true,
} as const;

export const BOT_CONFIG_SCHEMA = {
  $id: 'https://ledgerbot.dev/schema/bot-config.schema.json',
  type: 'object',
  required: ['ledger', 'rules'],
  additionalProperties: false,
  properties: {
    ledger: {
      type: 'object',
      required: ['userId'],
      additionalProperties: false,
      properties: {
        url: text,
        embedded: {
          type: 'object',
          required: ['models'],
          additionalProperties: false,
          properties: {
            models: { type: 'array', minItems: 1, items: text },
            parties: { type: 'array', items: alias, uniqueItems: true, default: [] },
          },
        },
        userId: text,
        auth: { ...authSchema, default: { type: 'none' } },
        tls: {
          type: 'object',
          additionalProperties: false,
          properties: { caFile: text, certFile: text, keyFile: text },
        },
        apiVersion: {
          type: 'string',
          enum: ['3.4', '3.5'],
          default: BOT_CONFIG_DEFAULTS.apiVersion,
        },
        pingInterval: { ...duration, default: BOT_CONFIG_DEFAULTS.pingInterval },
        // Daml packages (DAR or DALF files, or directories of them) the rules are checked
        // against, besides those the participant lists.
        packages: { type: 'array', items: text, default: [] },
        // No default: the bot waits for the participant at start until it answers.
        startTimeout: duration,
      },
    },
    parties: {
      type: 'object',
      propertyNames: { pattern: ALIAS_PATTERN },
      additionalProperties: text,
      default: {},
    },
    rules: {
      anyOf: [text, { type: 'array', minItems: 1, items: text }],
    },
    // Where `ledgerbot test` (with no paths) finds the rule tests; default tests/.
    tests: {
      anyOf: [text, { type: 'array', minItems: 1, items: text }],
    },
    state: {
      type: 'object',
      additionalProperties: false,
      properties: {
        dir: { ...text, default: BOT_CONFIG_DEFAULTS.stateDir },
        retention: { ...duration, default: BOT_CONFIG_DEFAULTS.retention },
        postgres: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: text,
            // As checkSchemaName (src/store/pg/quote-identifier.ts) accepts it.
            schema: {
              type: 'string',
              pattern: PG_SCHEMA_PATTERN,
              default: BOT_CONFIG_DEFAULTS.pgSchema,
            },
            poolSize: {
              type: 'integer',
              minimum: 2,
              maximum: 100,
              default: BOT_CONFIG_DEFAULTS.pgPoolSize,
            },
          },
        },
      },
      default: {},
    },
    start: {
      type: ['string', 'integer'],
      default: BOT_CONFIG_DEFAULTS.start,
    },
    submission: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        maxInFlight: { type: 'integer', minimum: 1, default: BOT_CONFIG_DEFAULTS.maxInFlight },
        completionTimeout: { ...duration, default: BOT_CONFIG_DEFAULTS.completionTimeout },
        retry: {
          type: 'object',
          additionalProperties: false,
          default: {},
          properties: {
            maxAttempts: {
              type: 'integer',
              minimum: 1,
              // The rules' default retry, so bounded as a rule's own is.
              maximum: RULE_LIMITS.RETRY_ATTEMPTS_MAX,
              default: BOT_CONFIG_DEFAULTS.retry.maxAttempts,
            },
            initialDelay: { ...duration, default: BOT_CONFIG_DEFAULTS.retry.initialDelay },
            maxDelay: { ...duration, default: BOT_CONFIG_DEFAULTS.retry.maxDelay },
            deadline: { ...duration, default: BOT_CONFIG_DEFAULTS.retry.deadline },
          },
        },
        dedup: dedupSchema,
      },
    },
    // Instances with the same state.postgres schema and fleet name share the rules (leases).
    fleet: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: FLEET_NAME_PATTERN },
        leasePeriod: { ...duration, default: BOT_CONFIG_DEFAULTS.leasePeriod },
      },
    },
    http: {
      type: 'object',
      required: ['port'],
      additionalProperties: false,
      properties: {
        port: { type: 'integer', minimum: 0, maximum: 65535 },
        host: { ...text, default: BOT_CONFIG_DEFAULTS.httpHost },
        token: text,
        readyMaxLag: { type: 'integer', minimum: 0, default: BOT_CONFIG_DEFAULTS.readyMaxLag },
        readOnly: { type: 'boolean', default: false },
        allowedHosts: {
          type: 'array',
          items: { type: 'string', pattern: HOST_NAME_PATTERN },
          uniqueItems: true,
          default: [],
        },
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        level: { enum: LOG_LEVELS, default: BOT_CONFIG_DEFAULTS.logLevel },
        pretty: { type: 'boolean' },
      },
    },
  },
} as const;
