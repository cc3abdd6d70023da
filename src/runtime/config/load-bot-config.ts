import { lazyValidator } from '../../core/lazy-validator.js';
import type { YamlPath } from '../../core/yaml-locator.js';
import type { BotConfig } from './bot-config.js';
import { BOT_CONFIG_SCHEMA } from './bot-config-schema.js';
import { checkLedgerEndpoint } from './check-ledger-endpoint.js';
import { compileBotConfig } from './compile-bot-config.js';
import type { ConfigProblem } from './config-error.js';
import {
  configProblem,
  ConfigProblemList,
  type ConfigCheckContext,
} from './config-problem-list.js';
import { configSchemaProblems } from './config-schema-problems.js';
import { describeConfigValue, isSecretPath } from './describe-config-value.js';
import { interpolateEnv } from './interpolate-env.js';
import { parseConfigYaml } from './parse-config-yaml.js';
import type { RawBotConfig } from './raw-bot-config.js';
import { resolveStartPosition } from './resolve-start-position.js';

export { isSecretPath };

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

/**
 * Parses, interpolates, validates and freezes a `bot.config.yaml`. Throws ConfigError with every
 * problem found, each at file:line:col. Pure apart from resolving paths against the file's
 * directory (and the working directory, when `path` is relative).
 */
export function loadBotConfig(options: LoadBotConfigOptions): BotConfig {
  const file = options.path;
  const problems = new ConfigProblemList(file);
  const parsed = parseConfigYaml(file, options.text, problems);
  if (parsed === undefined) return problems.fail();
  const { at } = parsed;

  const env = interpolateEnv(parsed.value ?? null, options.env ?? {});
  for (const p of env.problems) {
    const pos = at.valuePos(p.path, p.offset);
    if (p.code === 'MISSING_ENV' && options.onUnsetSecret !== undefined && isSecretPath(p.path)) {
      // Nothing else is said about this value: without its variable it is moot.
      problems.skip(p.path);
      options.onUnsetSecret(configProblem(file, pos, p.path, p.code, p.message, p.hint));
      continue;
    }
    problems.add(pos, p.path, p.code, p.message, p.hint);
  }
  problems.throwIfAny();

  const data = env.value;
  const validate = configValidator();
  if (!validate(data)) {
    for (const p of configSchemaProblems(validate.errors ?? [], env.fromEnv)) {
      problems.add(at.pos(p.path, { key: p.key }), p.path, p.code, p.message, p.hint);
    }
    // Every problem may be about an unset secret (onUnsetSecret): those are not errors here.
    problems.throwIfAny();
  }
  const raw = data as RawBotConfig;
  const ctx: ConfigCheckContext = {
    at,
    problems,
    describe: (path: YamlPath, value: unknown) => describeConfigValue(path, value, env.fromEnv),
  };
  const endpoint = checkLedgerEndpoint(raw, ctx);
  const start = resolveStartPosition(raw.start, ctx);
  if (endpoint === undefined || start === undefined) return problems.fail();
  problems.throwIfAny();
  return compileBotConfig(raw, file, endpoint, start);
}
