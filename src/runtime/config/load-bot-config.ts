import { parseYamlSource, type YamlPath } from '../../core/source/index.js';
import type { BotConfig } from './bot-config.js';
import { checkLedgerEndpoint } from './check-ledger-endpoint.js';
import { checkFleet } from './check-fleet.js';
import { checkStatePostgres } from './check-state-postgres.js';
import { checkPackagePaths } from './check-package-paths.js';
import { compileBotConfig } from './compile-bot-config.js';
import type { ConfigProblem } from './config-error.js';
import {
  configProblem,
  ConfigProblemList,
  type ConfigCheckContext,
} from './config-problem-list.js';
import { checkConfigSchema } from './check-config-schema.js';
import { describeConfigValue, isSecretPath } from './describe-config-value.js';
import { interpolateEnv } from './interpolate-env.js';
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

/** Config files are a few KB; anything this large is the wrong file. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Parses, interpolates, validates and freezes a `bot.config.yaml`. Throws ConfigError with every
 * problem found, each at file:line:col. Pure apart from resolving paths against the file's
 * directory (and the working directory, when `path` is relative).
 */
export function loadBotConfig(options: LoadBotConfigOptions): BotConfig {
  const file = options.path;
  const problems = new ConfigProblemList(file);
  const parsed = parseYamlSource(file, options.text, {
    noun: 'config file',
    limits: { maxBytes: MAX_CONFIG_BYTES },
    tooLargeAdvice: 'is it the right file?',
  });
  if (!parsed.ok) {
    problems.addAll(parsed.problems);
    return problems.fail();
  }
  const { at, value } = parsed.source;

  const env = interpolateEnv(value ?? null, options.env ?? {});
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

  // The check fills in the schema's defaults.
  const data = env.value;
  problems.addAll(checkConfigSchema(data, at, env.fromEnv));
  // Every problem may be about an unset secret (onUnsetSecret): those are not errors here.
  problems.throwIfAny();
  const raw = data as RawBotConfig;
  const ctx: ConfigCheckContext = {
    at,
    problems,
    describe: (path: YamlPath, shown: unknown) => describeConfigValue(path, shown, env.fromEnv),
  };
  const endpoint = checkLedgerEndpoint(raw, ctx);
  const start = resolveStartPosition(raw.start, ctx);
  const packages = checkPackagePaths(raw, ctx);
  checkFleet(raw, ctx);
  checkStatePostgres(raw, ctx);
  if (endpoint === undefined || start === undefined) return problems.fail();
  problems.throwIfAny();
  return compileBotConfig(raw, file, { endpoint, start, packages });
}
