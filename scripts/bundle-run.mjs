// Bundles what `ledgerbot run` loads into dist/run/ (part of `npm run build`, after tsc). Loading
// the daemon's ~360 ES and CommonJS modules one file at a time was about a third of its start-up;
// one bundle (split only at the dynamic imports, so `run` still loads no other command) is read
// and compiled at once. bin/ledgerbot.js runs `run` from it while it is at least as new as tsc's
// dist/cli/run-cli.js, every other command from tsc's output.
//
// Left outside: better-sqlite3 (a native addon), and what is only loaded on demand through
// `createRequire` (pino-pretty, ajv's compiler). A bundled package must not find its own files
// through __dirname on the daemon's path (there is none in an ES module): pino does only for
// transports, which ledgerbot does not use. dist/run/meta.json is esbuild's metafile (which
// files, relative to the repository, each output file holds: test/cli/run-module-loading.test.ts reads it); the source maps
// let a CPU profile of a bundled start name the source files (bench/cpu-profile-summary.ts).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'dist', 'run');

rmSync(out, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: [join(root, 'dist', 'cli', 'run-cli.js')],
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: ['better-sqlite3', 'pino-pretty', 'ajv'],
  // CommonJS packages inside an ES module bundle call require() for node's built-ins.
  banner: {
    js: "import { createRequire as __ledgerbotCreateRequire } from 'node:module'; const require = __ledgerbotCreateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
});
writeFileSync(join(out, 'meta.json'), JSON.stringify(result.metafile));
