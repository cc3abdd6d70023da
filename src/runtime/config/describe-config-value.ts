import type { YamlPath } from '../../core/yaml-locator.js';
import { SECRET_FIELDS } from './bot-config-schema.js';

/** `ledger.auth.type`, `rules[1]`; empty for the root. */
export function fieldPath(path: YamlPath): string {
  if (path.length === 0) return '';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** A field as messages name it: `ledger.url`, or "the file" for the root. */
export function fieldName(path: YamlPath): string {
  return path.length === 0 ? 'the file' : `\`${fieldPath(path)}\``;
}

/**
 * Fields that hold credentials, or point at them: the ledger's auth (tokens, client secrets,
 * token files), its TLS files, and the ops server's token.
 */
export function isSecretPath(path: YamlPath): boolean {
  const [a, b] = path;
  return (a === 'ledger' && (b === 'auth' || b === 'tls')) || (a === 'http' && b === 'token');
}

/** A value for a message, unless it is a secret or came from the environment. */
export function describeConfigValue(
  path: YamlPath,
  data: unknown,
  fromEnv: ReadonlySet<string>,
): string {
  const last = path[path.length - 1];
  if (typeof last === 'string' && SECRET_FIELDS.has(last)) return 'the (secret) value';
  if (fromEnv.has(path.join('/'))) return 'the value from the environment';
  if (data === null || data === undefined) return 'empty';
  if (Array.isArray(data)) return 'a list';
  if (typeof data === 'object') return 'a mapping';
  if (typeof data === 'string') return `"${data.length > 60 ? `${data.slice(0, 60)}…` : data}"`;
  return JSON.stringify(data) ?? 'a value';
}
