// Writes schema/rules.schema.json from src/rules/rules-schema.ts (the single source of truth).
// Run with `npm run gen:schema` after changing the rule language; a test fails while it is stale.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderRulesSchema } from '../src/rules/render-rules-schema.js';

const target = fileURLToPath(new URL('../schema/rules.schema.json', import.meta.url));
await writeFile(target, renderRulesSchema());
process.stdout.write(`wrote ${target}\n`);
