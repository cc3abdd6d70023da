import { RULES_SCHEMA } from './rules-schema.js';

/** The published schema file's exact text (schema/rules.schema.json). */
export function renderRulesSchema(): string {
  return `${JSON.stringify(RULES_SCHEMA, null, 2)}\n`;
}
