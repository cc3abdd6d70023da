import { describeValue, dottedPath, type YamlPath } from '../../core/source/index.js';
import { SECRET_FIELDS } from './bot-config-schema.js';

/** `ledger.auth.type`, `rules[1]`; empty for the root. */
export const fieldPath = dottedPath;

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
  return (
    (a === 'ledger' && (b === 'auth' || b === 'tls')) ||
    (a === 'http' && b === 'token') ||
    (a === 'state' && b === 'postgres' && path[2] === 'url')
  );
}

/** A field whose value is never shown: a token, a client secret, the PostgreSQL URL. */
export function isSecretField(path: YamlPath): boolean {
  const last = path[path.length - 1];
  if (path.length === 3 && path[0] === 'state' && path[1] === 'postgres') return last === 'url';
  return typeof last === 'string' && SECRET_FIELDS.has(last);
}

/** A value for a message, unless it is a secret or came from the environment. */
export function describeConfigValue(
  path: YamlPath,
  data: unknown,
  fromEnv: ReadonlySet<string>,
): string {
  if (isSecretField(path)) return 'the (secret) value';
  if (fromEnv.has(path.join('/'))) return 'the value from the environment';
  return describeValue(data);
}
