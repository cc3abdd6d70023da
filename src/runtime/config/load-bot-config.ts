import { dirname, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import { lazyValidator } from '../../core/lazy-validator.js';
import { LineCounter, parseDocument } from 'yaml';
import { ajvInstancePath } from '../../core/ajv-instance-path.js';
import { ajvTypeWords } from '../../core/ajv-type-words.js';
import { parseDuration } from '../../core/duration.js';
import { schemaPropertyNames } from '../../core/schema-property-names.js';
import { YamlLocator, type YamlPath } from '../../core/yaml-locator.js';
import { guardRuleText, textPos } from '../../rules/guard-rule-text.js';
import type { AuthConfig } from '../../ledger/auth/create-auth-provider.js';
import { closestMatch } from '../../rules/closest-match.js';
import type {
  ApiVersion,
  BotConfig,
  DedupConfig,
  LedgerEndpoint,
  LogLevel,
  StartPosition,
  TlsFiles,
} from './bot-config.js';
import {
  ALIAS_PATTERN,
  BOT_CONFIG_DEFAULTS,
  BOT_CONFIG_SCHEMA,
  DURATION_PATTERN,
  SECRET_FIELDS,
  START_KEYWORDS,
} from './bot-config-schema.js';
import { ConfigError, type ConfigProblem, type ConfigProblemCode } from './config-error.js';
import { interpolateEnv } from './interpolate-env.js';

export type LoadBotConfigOptions = {
  /** The file's path as the user gave it: shown in messages, and the base for relative paths. */
  readonly path: string;
  readonly text: string;
  /** The environment for `${VAR}` interpolation (the CLI passes process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * When given, an unset variable in a secret field (see isSecretPath: `ledger.auth`,
   * `ledger.tls`, `http.token`) is not an error but handed to this callback, and nothing else is
   * reported about that field's value: `validate` needs no credentials. `run` leaves it out.
   */
  readonly onUnsetSecret?: (problem: ConfigProblem) => void;
};

/**
 * Fields that hold credentials, or point at them: the ledger's auth (tokens, client secrets,
 * token files), its TLS files, and the ops server's token.
 */
export function isSecretPath(path: readonly (string | number)[]): boolean {
  const [a, b] = path;
  return (a === 'ledger' && (b === 'auth' || b === 'tls')) || (a === 'http' && b === 'token');
}

const configValidator = lazyValidator(
  {
    allErrors: true,
    useDefaults: true,
    coerceTypes: true,
    discriminator: true,
    verbose: true,
    strict: false,
  },
  BOT_CONFIG_SCHEMA,
);

/** The validated config as the schema leaves it (defaults filled in, before conversion). */
type RawConfig = {
  ledger: {
    url?: string;
    embedded?: { models: string[]; parties: string[] };
    userId: string;
    auth: AuthConfig;
    tls?: TlsFiles;
    apiVersion: ApiVersion;
    pingInterval: string;
    startTimeout?: string;
  };
  parties: Record<string, string>;
  rules: string | string[];
  tests?: string | string[];
  state: { dir: string; retention: string };
  start: string | number;
  submission: {
    maxInFlight: number;
    completionTimeout: string;
    retry: { maxAttempts: number; initialDelay: string; maxDelay: string; deadline: string };
    dedup: { mode: 'offset'; fallback?: string } | { mode: 'duration'; value: string };
  };
  http?: { port: number; host: string; token?: string; readyMaxLag: number };
  log: { level: LogLevel; pretty?: boolean };
};

/**
 * Parses, interpolates, validates and freezes a `bot.config.yaml`. Throws ConfigError with every
 * problem found, each at file:line:col. Pure apart from resolving paths against the file's
 * directory (and the working directory, when `path` is relative).
 */
const MAX_CONFIG_BYTES = 1024 * 1024;

export function loadBotConfig(options: LoadBotConfigOptions): BotConfig {
  const file = options.path;
  // Hostile nesting would exhaust the YAML parser's stack: the rule files' guard runs first.
  const guard = guardRuleText(options.text, MAX_CONFIG_BYTES);
  if (guard !== null) {
    throw new ConfigError([
      {
        file,
        ...textPos(options.text, guard.offset),
        path: '',
        code: 'YAML_TOO_COMPLEX',
        message:
          guard.code === 'FILE_TOO_LARGE'
            ? `the config file is too large: ${guard.reason}`
            : `YAML too complex for a config file: ${guard.reason}`,
      },
    ]);
  }
  const lines = new LineCounter();
  const doc = parseDocument(options.text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
  });
  const at = new YamlLocator(file, options.text, doc, lines);
  const problems: ConfigProblem[] = [];
  /** Secret fields whose variables are unset, with onUnsetSecret: their values are moot. */
  const unsetSecrets = new Set<string>();
  const report = (
    pos: { line: number; col: number },
    path: YamlPath,
    code: ConfigProblemCode,
    message: string,
    hint?: string,
  ): void => {
    if (unsetSecrets.has(path.join('/'))) return;
    problems.push({
      file,
      line: pos.line,
      col: pos.col,
      path: fieldPath(path),
      code,
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  };
  const fail = (): never => {
    throw new ConfigError(problems as [ConfigProblem, ...ConfigProblem[]]);
  };

  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      // Only the first line: the rest is a code frame that could show a secret.
      const message = (e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
      report(at.at(e.pos[0]), [], 'YAML_SYNTAX', `YAML syntax: ${message}`);
    }
    fail();
  }
  let parsed: unknown;
  try {
    parsed = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    report(at.pos([]), [], 'YAML_SYNTAX', `YAML: ${(error as Error).message}`);
    fail();
  }

  const env = interpolateEnv(parsed ?? null, options.env ?? {});
  for (const p of env.problems) {
    const pos = at.valuePos(p.path, p.offset);
    if (p.code === 'MISSING_ENV' && options.onUnsetSecret !== undefined && isSecretPath(p.path)) {
      unsetSecrets.add(p.path.join('/'));
      options.onUnsetSecret({
        file,
        line: pos.line,
        col: pos.col,
        path: fieldPath(p.path),
        code: p.code,
        message: p.message,
        ...(p.hint === undefined ? {} : { hint: p.hint }),
      });
      continue;
    }
    report(pos, p.path, p.code, p.message, p.hint);
  }
  if (problems.length > 0) fail();

  const data = env.value;
  const validate = configValidator();
  if (!validate(data)) {
    for (const problem of schemaProblems(validate.errors ?? [], env.fromEnv)) {
      report(
        at.pos(problem.path, { key: problem.key }),
        problem.path,
        problem.code,
        problem.message,
        problem.hint,
      );
    }
    // Every problem may be about an unset secret (onUnsetSecret): those are not errors here.
    if (problems.length > 0) fail();
  }
  const raw = data as RawConfig;
  const baseDir = dirname(resolve(file));
  const abs = (p: string): string => resolve(baseDir, p);
  const describe = (path: YamlPath, value: unknown): string =>
    describeValue(path, value, env.fromEnv);

  // ---- checks the schema cannot express ----
  let endpoint: LedgerEndpoint | undefined;
  const { url, embedded } = raw.ledger;
  if (url !== undefined && embedded !== undefined) {
    report(
      at.pos(['ledger', 'embedded'], { key: true }),
      ['ledger'],
      'LEDGER_ENDPOINT',
      '`ledger` has both `url` and `embedded`',
      'keep `url` to connect to a participant, or `embedded` to start the sandbox in-process',
    );
  } else if (url === undefined && embedded === undefined) {
    report(
      at.pos(['ledger'], { key: true }),
      ['ledger'],
      'LEDGER_ENDPOINT',
      '`ledger` has neither `url` nor `embedded`',
      'add `url: http://host:port` (the JSON Ledger API) or `embedded: {models: [...]}`',
    );
  } else if (url !== undefined) {
    const bad = urlProblem(url);
    if (bad === undefined) endpoint = { kind: 'url', url: url.replace(/\/+$/, '') };
    else {
      report(
        at.pos(['ledger', 'url']),
        ['ledger', 'url'],
        'BAD_URL',
        `\`ledger.url\`: ${describe(['ledger', 'url'], url)} ${bad}`,
        'write the JSON Ledger API address, e.g. http://127.0.0.1:7575 or https://participant.example.com',
      );
    }
  } else if (embedded !== undefined) {
    endpoint = {
      kind: 'embedded',
      models: embedded.models.map(abs),
      parties: embedded.parties,
    };
    embedded.parties.forEach((alias, i) => {
      if (Object.hasOwn(raw.parties, alias)) {
        report(
          at.pos(['ledger', 'embedded', 'parties', i]),
          ['ledger', 'embedded', 'parties', i],
          'DUPLICATE_ALIAS',
          `party alias "${alias}" is both allocated (ledger.embedded.parties) and fixed (parties)`,
          'an alias is either allocated by the embedded sandbox or mapped to an existing party id, not both',
        );
      }
    });
  }
  if (raw.ledger.auth.type === 'oauth2') {
    const bad = urlProblem(raw.ledger.auth.tokenUrl);
    if (bad !== undefined) {
      const path = ['ledger', 'auth', 'tokenUrl'];
      report(
        at.pos(path),
        path,
        'BAD_URL',
        `\`ledger.auth.tokenUrl\`: ${describe(path, raw.ledger.auth.tokenUrl)} ${bad}`,
        "write the identity provider's token endpoint, e.g. https://idp.example.com/oauth/token",
      );
    }
  }
  const tls = raw.ledger.tls;
  if (tls !== undefined && (tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    report(
      at.pos(['ledger', 'tls']),
      ['ledger', 'tls'],
      'MISSING_KEY',
      '`ledger.tls` needs both `certFile` and `keyFile` for a client certificate, or neither',
    );
  }

  let start: StartPosition | undefined;
  const startValue = raw.start;
  const startOffset =
    typeof startValue === 'number'
      ? startValue
      : /^\d+$/.test(startValue)
        ? Number(startValue)
        : undefined;
  if (startOffset !== undefined && Number.isSafeInteger(startOffset) && startOffset >= 0) {
    start = { kind: 'offset', offset: startOffset };
  } else if (
    typeof startValue === 'string' &&
    (START_KEYWORDS as readonly string[]).includes(startValue)
  ) {
    start = { kind: startValue as 'checkpoint' | 'ledger-end' | 'begin' };
  } else {
    const guess =
      typeof startValue === 'string' ? closestMatch(startValue, START_KEYWORDS) : undefined;
    report(
      at.pos(['start']),
      ['start'],
      'BAD_START',
      `\`start\` must be checkpoint, ledger-end, begin or an offset, not ${describe(['start'], startValue)}`,
      guess === undefined
        ? 'an offset is a whole number of at least 0, e.g. start: 1200'
        : `did you mean "${guess}"?`,
    );
  }
  if (problems.length > 0 || endpoint === undefined || start === undefined) fail();

  const s = raw.submission;
  const dedup: DedupConfig =
    s.dedup.mode === 'duration'
      ? { mode: 'duration', valueMs: parseDuration(s.dedup.value) }
      : {
          mode: 'offset',
          fallbackMs: parseDuration(s.dedup.fallback ?? BOT_CONFIG_DEFAULTS.dedupFallback),
        };
  const auth: AuthConfig =
    raw.ledger.auth.type === 'file'
      ? { ...raw.ledger.auth, path: abs(raw.ledger.auth.path) }
      : raw.ledger.auth;
  const config: BotConfig = {
    file: resolve(file),
    ledger: {
      endpoint: endpoint!,
      userId: raw.ledger.userId,
      auth,
      ...(tls === undefined
        ? {}
        : {
            tls: {
              ...(tls.caFile === undefined ? {} : { caFile: abs(tls.caFile) }),
              ...(tls.certFile === undefined ? {} : { certFile: abs(tls.certFile) }),
              ...(tls.keyFile === undefined ? {} : { keyFile: abs(tls.keyFile) }),
            },
          }),
      apiVersion: raw.ledger.apiVersion,
      pingIntervalMs: parseDuration(raw.ledger.pingInterval),
      ...(raw.ledger.startTimeout === undefined
        ? {}
        : { startTimeoutMs: parseDuration(raw.ledger.startTimeout) }),
    },
    parties: raw.parties,
    rules: (Array.isArray(raw.rules) ? raw.rules : [raw.rules]).map(abs),
    tests: [raw.tests ?? BOT_CONFIG_DEFAULTS.testsDir].flat().map(abs),
    state: { dir: abs(raw.state.dir), retentionMs: parseDuration(raw.state.retention) },
    start: start!,
    submission: {
      maxInFlight: s.maxInFlight,
      completionTimeoutMs: parseDuration(s.completionTimeout),
      retry: {
        maxAttempts: s.retry.maxAttempts,
        initialDelayMs: parseDuration(s.retry.initialDelay),
        maxDelayMs: parseDuration(s.retry.maxDelay),
        deadlineMs: parseDuration(s.retry.deadline),
      },
      dedup,
    },
    ...(raw.http === undefined
      ? {}
      : {
          http: {
            port: raw.http.port,
            host: raw.http.host,
            readyMaxLag: raw.http.readyMaxLag,
            ...(raw.http.token === undefined ? {} : { token: raw.http.token }),
          },
        }),
    log: {
      level: raw.log.level,
      ...(raw.log.pretty === undefined ? {} : { pretty: raw.log.pretty }),
    },
  };
  return deepFreeze(config);
}

function urlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'must start with http:// or https://';
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials; put them in `ledger.auth`';
  }
  return undefined;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

// ---- ajv errors, for people ----

type SchemaProblem = {
  readonly path: YamlPath;
  readonly key: boolean;
  readonly code: ConfigProblemCode;
  readonly message: string;
  readonly hint?: string;
};

/** `ledger.auth.type`, `rules[1]`; "the file" for the root. */
function fieldPath(path: YamlPath): string {
  if (path.length === 0) return '';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function field(path: YamlPath): string {
  return path.length === 0 ? 'the file' : `\`${fieldPath(path)}\``;
}

/** A value for a message, unless it is a secret or came from the environment. */
function describeValue(path: YamlPath, data: unknown, fromEnv: ReadonlySet<string>): string {
  const last = path[path.length - 1];
  if (typeof last === 'string' && SECRET_FIELDS.has(last)) return 'the (secret) value';
  if (fromEnv.has(path.join('/'))) return 'the value from the environment';
  if (data === null || data === undefined) return 'empty';
  if (Array.isArray(data)) return 'a list';
  if (typeof data === 'object') return 'a mapping';
  if (typeof data === 'string') return `"${data.length > 60 ? `${data.slice(0, 60)}…` : data}"`;
  return JSON.stringify(data) ?? 'a value';
}

function discriminatorValues(schema: unknown, tag: string): string[] {
  const branches = (schema as { oneOf?: { properties?: Record<string, { const?: unknown }> }[] })
    .oneOf;
  return (branches ?? []).map((b) => String(b.properties?.[tag]?.const));
}

const MISSING_HINTS: Readonly<Record<string, string>> = {
  ledger: 'add `ledger:` with `url` (or `embedded`) and `userId`',
  rules: 'add `rules: rules/` (a directory of rule files) or a list of paths',
  userId: 'add `userId:` with the Ledger API user the bot submits as',
  type: 'add `type:` none, static, file or oauth2',
  mode: 'add `mode: offset` or `mode: duration`',
  port: 'add `port:` (0 picks a free port)',
  value: 'add `value:` with a duration, e.g. 24h',
  models: 'add `models:` with the model files to load, e.g. [model.yaml]',
};

function schemaProblems(
  errors: readonly ErrorObject[],
  fromEnv: ReadonlySet<string>,
): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (/\/anyOf\/\d+\//.test(e.schemaPath) || e.schemaPath.includes('/propertyNames/')) continue;
    const path = ajvInstancePath(e);
    const params = e.params as Record<string, unknown>;
    const value = (p: YamlPath = path): string => describeValue(p, e.data, fromEnv);
    let problem: SchemaProblem;
    switch (e.keyword) {
      case 'additionalProperties': {
        const key = String(params.additionalProperty);
        const allowed = schemaPropertyNames(e.parentSchema);
        const guess = closestMatch(key, allowed);
        problem = {
          path: [...path, key],
          key: true,
          code: 'UNKNOWN_KEY',
          message: `unknown key "${key}" in ${path.length === 0 ? 'the top level' : field(path)}`,
          hint:
            guess !== undefined
              ? `did you mean "${guess}"?`
              : `allowed here: ${allowed.join(', ')}`,
        };
        break;
      }
      case 'required': {
        const missing = String(params.missingProperty);
        problem = {
          path,
          key: path.length > 0,
          code: 'MISSING_KEY',
          message: `${field(path)} has no \`${missing}\``,
          ...(MISSING_HINTS[missing] === undefined ? {} : { hint: MISSING_HINTS[missing] }),
        };
        break;
      }
      case 'discriminator': {
        const tag = String(params.tag);
        const allowed = discriminatorValues(e.parentSchema, tag);
        const tagPath = [...path, tag];
        const tagValue = params.tagValue;
        const guess = typeof tagValue === 'string' ? closestMatch(tagValue, allowed) : undefined;
        problem =
          params.error === 'tag'
            ? {
                path,
                key: true,
                code: 'MISSING_KEY',
                message: `${field(path)} has no \`${tag}\``,
                hint: `add \`${tag}:\` ${allowed.join(', ')}`,
              }
            : {
                path: tagPath,
                key: false,
                code: 'BAD_VALUE',
                message: `${field(tagPath)} must be one of ${allowed.join(', ')}, not ${describeValue(tagPath, tagValue, fromEnv)}`,
                ...(guess === undefined ? {} : { hint: `did you mean "${guess}"?` }),
              };
        break;
      }
      case 'type':
        problem = {
          path,
          key: false,
          code: 'WRONG_TYPE',
          message:
            path.length === 0
              ? e.data === null || e.data === undefined
                ? 'the file is empty'
                : `the file must be a mapping of settings, not ${value()}`
              : `${field(path)} must be ${ajvTypeWords(params.type)}, not ${value()}`,
        };
        break;
      case 'enum': {
        const allowed = (params.allowedValues as unknown[]).map(String);
        // Edit distance says nothing about version numbers: "3.6" is not a typo of "3.4".
        const guess =
          typeof e.data === 'string' && !/^[\d.]+$/.test(e.data)
            ? closestMatch(e.data, allowed)
            : undefined;
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${field(path)} must be one of ${allowed.join(', ')}, not ${value()}`,
          ...(guess === undefined ? {} : { hint: `did you mean "${guess}"?` }),
        };
        break;
      }
      case 'pattern':
        problem =
          params.pattern === DURATION_PATTERN
            ? {
                path,
                key: false,
                code: 'BAD_DURATION',
                message: `${field(path)}: ${value()} is not a duration`,
                hint: 'write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m',
              }
            : params.pattern === ALIAS_PATTERN
              ? {
                  path,
                  key: false,
                  code: 'BAD_VALUE',
                  message: `${field(path)}: ${value()} is not a party alias`,
                  hint: 'aliases are letters, digits, - and _, starting with a letter',
                }
              : {
                  path,
                  key: false,
                  code: 'BAD_VALUE',
                  message: `${field(path)} ${e.message ?? 'is not valid'}`,
                };
        break;
      case 'propertyNames':
        problem = {
          path: [...path, String(params.propertyName)],
          key: true,
          code: 'BAD_VALUE',
          message: `"${String(params.propertyName)}" is not a party alias`,
          hint: 'aliases are letters, digits, - and _, starting with a letter',
        };
        break;
      case 'anyOf':
        problem = {
          path,
          key: false,
          code: 'WRONG_TYPE',
          message: `${field(path)} must be a path (text) or a list of paths, not ${value()}`,
        };
        break;
      case 'minLength':
        problem = { path, key: false, code: 'BAD_VALUE', message: `${field(path)} is empty` };
        break;
      case 'minItems':
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${field(path)} is an empty list`,
          hint: 'give at least one entry',
        };
        break;
      case 'minimum':
      case 'maximum':
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${field(path)} must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)}, not ${value()}`,
        };
        break;
      case 'uniqueItems':
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${field(path)} lists the same entry twice (items ${String(params.j)} and ${String(params.i)})`,
        };
        break;
      case 'oneOf':
      case 'const':
        continue;
      default:
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${field(path)} ${e.message ?? 'is not valid'}`,
        };
    }
    const key = `${problem.path.join('/')}|${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(problem);
  }
  return out;
}
