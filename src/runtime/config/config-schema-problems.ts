import type { ErrorObject } from 'ajv';
import { ajvInstancePath } from '../../core/ajv-instance-path.js';
import { ajvTypeWords } from '../../core/ajv-type-words.js';
import { schemaPropertyNames } from '../../core/schema-property-names.js';
import { closestMatch } from '../../core/source/closest-match.js';
import type { YamlPath } from '../../core/yaml-locator.js';
import { ALIAS_PATTERN, DURATION_PATTERN } from './bot-config-schema.js';
import type { ConfigProblemCode } from './config-error.js';
import { describeConfigValue, fieldName } from './describe-config-value.js';

export type ConfigSchemaProblem = {
  readonly path: YamlPath;
  readonly key: boolean;
  readonly code: ConfigProblemCode;
  readonly message: string;
  readonly hint?: string;
};

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

/** ajv's errors as problems in the config's words, one per mistake, in ajv's order. */
export function configSchemaProblems(
  errors: readonly ErrorObject[],
  fromEnv: ReadonlySet<string>,
): ConfigSchemaProblem[] {
  const out: ConfigSchemaProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (/\/anyOf\/\d+\//.test(e.schemaPath) || e.schemaPath.includes('/propertyNames/')) continue;
    const path = ajvInstancePath(e);
    const params = e.params as Record<string, unknown>;
    const value = (p: YamlPath = path): string => describeConfigValue(p, e.data, fromEnv);
    let problem: ConfigSchemaProblem;
    switch (e.keyword) {
      case 'additionalProperties': {
        const key = String(params.additionalProperty);
        const allowed = schemaPropertyNames(e.parentSchema);
        const guess = closestMatch(key, allowed);
        problem = {
          path: [...path, key],
          key: true,
          code: 'UNKNOWN_KEY',
          message: `unknown key "${key}" in ${path.length === 0 ? 'the top level' : fieldName(path)}`,
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
          message: `${fieldName(path)} has no \`${missing}\``,
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
                message: `${fieldName(path)} has no \`${tag}\``,
                hint: `add \`${tag}:\` ${allowed.join(', ')}`,
              }
            : {
                path: tagPath,
                key: false,
                code: 'BAD_VALUE',
                message: `${fieldName(tagPath)} must be one of ${allowed.join(', ')}, not ${describeConfigValue(tagPath, tagValue, fromEnv)}`,
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
              : `${fieldName(path)} must be ${ajvTypeWords(params.type)}, not ${value()}`,
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
          message: `${fieldName(path)} must be one of ${allowed.join(', ')}, not ${value()}`,
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
                message: `${fieldName(path)}: ${value()} is not a duration`,
                hint: 'write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m',
              }
            : params.pattern === ALIAS_PATTERN
              ? {
                  path,
                  key: false,
                  code: 'BAD_VALUE',
                  message: `${fieldName(path)}: ${value()} is not a party alias`,
                  hint: 'aliases are letters, digits, - and _, starting with a letter',
                }
              : {
                  path,
                  key: false,
                  code: 'BAD_VALUE',
                  message: `${fieldName(path)} ${e.message ?? 'is not valid'}`,
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
          message: `${fieldName(path)} must be a path (text) or a list of paths, not ${value()}`,
        };
        break;
      case 'minLength':
        problem = { path, key: false, code: 'BAD_VALUE', message: `${fieldName(path)} is empty` };
        break;
      case 'minItems':
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${fieldName(path)} is an empty list`,
          hint: 'give at least one entry',
        };
        break;
      case 'minimum':
      case 'maximum':
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${fieldName(path)} must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)}, not ${value()}`,
        };
        break;
      case 'uniqueItems':
        problem = {
          path,
          key: false,
          code: 'BAD_VALUE',
          message: `${fieldName(path)} lists the same entry twice (items ${String(params.j)} and ${String(params.i)})`,
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
          message: `${fieldName(path)} ${e.message ?? 'is not valid'}`,
        };
    }
    const key = `${problem.path.join('/')}|${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(problem);
  }
  return out;
}
