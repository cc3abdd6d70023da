import type { ErrorObject } from 'ajv';
import {
  schemaChecker,
  type SchemaProblem,
  type SourceProblem,
  type YamlLocator,
  type YamlPath,
} from '../../core/source/index.js';
import {
  ALIAS_PATTERN,
  BOT_CONFIG_AJV_OPTIONS,
  BOT_CONFIG_SCHEMA,
  DURATION_PATTERN,
  HOST_NAME_PATTERN,
} from './bot-config-schema.js';
import { validate as validateConfig } from './generated/bot-config-validator.js';
import type { ConfigProblemCode } from './config-error.js';
import { describeConfigValue, fieldName, isSecretField } from './describe-config-value.js';

const ALIAS_HINT = 'aliases are letters, digits, - and _, starting with a letter';

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

type Problem = SchemaProblem<ConfigProblemCode>;

/** The config's own words where the front end's defaults say less. */
function explain(
  e: ErrorObject,
  path: YamlPath,
  describe: (p: YamlPath) => string,
): Problem | null | undefined {
  switch (e.keyword) {
    case 'type':
      if (path.length > 0 || e.data === null || e.data === undefined) return undefined;
      return {
        path,
        key: false,
        code: 'WRONG_TYPE',
        message: `the file must be a mapping of settings, not ${describe(path)}`,
      };
    case 'anyOf':
      // `rules` and `tests`: a path or a list of paths.
      return {
        path,
        key: false,
        code: 'WRONG_TYPE',
        message: `${fieldName(path)} must be a path (text) or a list of paths, not ${describe(path)}`,
      };
    case 'oneOf':
    case 'const':
      // The discriminator's own error (or the chosen branch's) says it better.
      return null;
    default:
      return undefined;
  }
}

const checkSchema = schemaChecker<ConfigProblemCode>(BOT_CONFIG_SCHEMA, {
  ajv: BOT_CONFIG_AJV_OPTIONS,
  compiled: validateConfig,
  secret: isSecretField,
  place: (path) => (path.length === 0 ? 'in the top level' : `in ${fieldName(path)}`),
  // Only `parties` limits its key names: to party aliases.
  badName: (name) => ({ message: `"${name}" is not a party alias`, hint: ALIAS_HINT }),
  missingHints: MISSING_HINTS,
  patterns: {
    [DURATION_PATTERN]: {
      what: 'a duration',
      code: 'BAD_DURATION',
      hint: 'write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m',
    },
    [ALIAS_PATTERN]: { what: 'a party alias', hint: ALIAS_HINT },
    [HOST_NAME_PATTERN]: {
      what: 'a host name',
      hint: 'write the name alone, as the Host header names it without its port, e.g. console.example.com',
    },
  },
});

/**
 * Validates an interpolated config against BOT_CONFIG_SCHEMA, filling in its defaults, and
 * explains every problem in the config's words through the shared front end. Values from the
 * environment and secret fields are never shown. With ajv's `discriminator` (`ledger.auth`,
 * `submission.dedup`) the tag picks the one branch checked, and the front end keeps its errors.
 */
export function checkConfigSchema(
  data: unknown,
  at: YamlLocator,
  fromEnv: ReadonlySet<string>,
): readonly SourceProblem<ConfigProblemCode>[] {
  const describe = (path: YamlPath, value: unknown): string =>
    describeConfigValue(path, value, fromEnv);
  return checkSchema(data, at, {
    value: (value, path) => describe(path, value),
    explain: (e, path) => explain(e, path, (p) => describe(p, e.data)),
  }).problems;
}
