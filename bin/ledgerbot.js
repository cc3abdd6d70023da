#!/usr/bin/env node
// The CLI entry. The TypeScript sources are compiled to dist/ by `npm ci` (the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/run-cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('ledgerbot: dist/ is missing; run `npm ci` (or `npm run build`) first\n');
  process.exit(2);
}
const { runCli } = await import(entry.href);
process.exitCode = await runCli(process.argv.slice(2));
