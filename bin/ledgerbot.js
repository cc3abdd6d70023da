#!/usr/bin/env node
// The CLI entry. The TypeScript sources are compiled to dist/ by `npm ci` (the prepare script).
import { existsSync, statSync } from 'node:fs';

// `run` reloads its rules on SIGHUP. Until its handler is installed (after the modules load and
// the config is read), Node's default would end the daemon with exit 129: a `systemctl reload`
// right after a start must not do that. The rules read at start are the newest anyway.
if (process.argv[2] === 'run') process.on('SIGHUP', () => {});

const entry = new URL('../dist/cli/run-cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('ledgerbot: dist/ is missing; run `npm ci` (or `npm run build`) first\n');
  process.exit(2);
}
// `run` starts from its bundle (scripts/bundle-run.mjs, the second half of `npm run build`): a
// daemon's start-up is a benchmarked target, and loading its modules one file at a time was a
// third of it. A bundle older than tsc's output (a build that stopped after tsc) is not used.
const bundle = new URL('../dist/run/run-cli.js', import.meta.url);
const bundled =
  process.argv[2] === 'run' &&
  (statSync(bundle, { throwIfNoEntry: false })?.mtimeMs ?? 0) >= statSync(entry).mtimeMs;
const { runCli } = await import((bundled ? bundle : entry).href);
process.exitCode = await runCli(process.argv.slice(2));
