// Writes the published JSON Schemas from their single sources of truth:
//   schema/rules.schema.json       src/rules/rules-schema.ts
//   schema/rule-tests.schema.json  src/rules/rule-tests/rule-test-file-schema.ts
//   schema/bot-config.schema.json  src/runtime/config/bot-config-schema.ts
// Run with `npm run gen:schema` after changing one; a test fails while a file is stale.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderRuleTestsSchema } from '../src/rules/render-rule-tests-schema.js';
import { renderRulesSchema } from '../src/rules/render-rules-schema.js';
import { renderBotConfigSchema } from '../src/runtime/config/render-bot-config-schema.js';

const schemas: [string, string][] = [
  ['rules.schema.json', renderRulesSchema()],
  ['rule-tests.schema.json', renderRuleTestsSchema()],
  ['bot-config.schema.json', renderBotConfigSchema()],
];
for (const [name, text] of schemas) {
  const target = fileURLToPath(new URL(`../schema/${name}`, import.meta.url));
  await writeFile(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
