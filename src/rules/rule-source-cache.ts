import type { YamlSnapshot } from '../core/source/yaml-snapshot.js';
import { sha256Hex } from '../core/sha256-hex.js';
import { RULES_SCHEMA } from './rules-schema.js';

/**
 * A rule file that parsed and passed the schema without a problem: its value (with the schema's
 * defaults filled in) and the snapshot that points into its text. What `loadRules` would compute
 * again from the same text; compiling it against parties and packages is still done each load.
 */
export type CheckedRuleSource = { readonly value: unknown; readonly yaml: YamlSnapshot };

/**
 * Where `loadRules` keeps the checked form of clean rule files between loads (and, through the
 * CLI's rule-cache file, between starts), so that an unchanged file skips YAML and the schema.
 * Entries are found by `ruleSourceKey`; a `get` that returns something malformed is ignored.
 */
export type RuleSourceCache = {
  get(key: string): CheckedRuleSource | undefined;
  set(key: string, entry: CheckedRuleSource): void;
};

let schemaDigest: string | undefined;

/**
 * The key of one rule file: its path (positions name it) and bytes, the size limit it was
 * checked against, and the schema it was checked with (a changed schema, or defaults, changes
 * every key).
 */
export function ruleSourceKey(file: { path: string; text: string }, maxFileBytes: number): string {
  schemaDigest ??= sha256Hex(JSON.stringify(RULES_SCHEMA));
  return sha256Hex(`${schemaDigest}\n${maxFileBytes}\n${JSON.stringify(file.path)}\n${file.text}`);
}
