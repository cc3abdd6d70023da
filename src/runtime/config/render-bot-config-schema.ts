import { BOT_CONFIG_SCHEMA } from './bot-config-schema.js';

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
    ...(allowEnvReferences(rest) as object),
  };
}

/** The published schema file's exact text. */
export function renderBotConfigSchema(): string {
  return `${JSON.stringify(botConfigSchema(), null, 2)}\n`;
}
