import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../integration/child-bot.js';
import { TestScope } from '../support/test-scope.js';

// What `ledgerbot run` loads before it reads its config: its own command and what a bot against
// a participant needs, not the other commands, the sandbox, the sandbox's model loader,
// pino-pretty, ajv's compiler, the PostgreSQL driver or undici's index (start-up is a
// benchmarked target). The child lists every module
// it loaded (ES modules through a load hook, CommonJS ones from require.cache) when it exits.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLE = join(ROOT, 'dist', 'run');

const HOOK = `import { register, createRequire } from 'node:module';
const seen = [];
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => seen.push(url));
port1.unref();
register('data:text/javascript,' + encodeURIComponent(\`
let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }
\`), { data: { port: port2 }, transferList: [port2] });
process.on('exit', () => {
  const cjs = Object.keys(createRequire(import.meta.url).cache);
  process.stderr.write('LOADED ' + JSON.stringify([...seen, ...cjs]) + '\\n');
});
`;

beforeAll(() => ensureBuilt(), 180_000);

let scope: TestScope;
beforeEach(() => {
  scope = new TestScope();
});
afterEach(() => scope.close());

function loadedBy(args: string[]): string[] {
  const dir = scope.tempDir();
  const hook = join(dir, 'hook.mjs');
  writeFileSync(hook, HOOK);
  const r = spawnSync(process.execPath, ['--import', hook, 'bin/ledgerbot.js', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const line = r.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (line === undefined) throw new Error(`no module list:\n${r.stderr}`);
  return (JSON.parse(line.slice('LOADED '.length)) as string[]).map((u) =>
    u.startsWith('file://') ? fileURLToPath(u) : u,
  );
}

/** The files a loaded part of `run`'s bundle holds (from esbuild's metafile); none for others. */
function bundledFiles(loaded: string): string[] {
  if (!loaded.startsWith(BUNDLE)) return [];
  const meta = JSON.parse(readFileSync(join(BUNDLE, 'meta.json'), 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, unknown> }>;
  };
  const inputs = meta.outputs[relative(ROOT, loaded)]?.inputs ?? {};
  return Object.keys(inputs).map((input) => join(ROOT, input));
}

describe('ledgerbot run: module loading', () => {
  it('loads its own command and what a bot against a participant needs, nothing else', () => {
    const dir = scope.tempDir();
    const config = join(dir, 'bot.config.yaml');
    writeFileSync(config, 'ledger: { url: "http://127.0.0.1:9" }\n'); // invalid: exits 2 at once
    const files = loadedBy(['run', '--config', config]);
    // From its bundle (scripts/bundle-run.mjs), not tsc's output; below, the sources it holds.
    expect(files).toContain(join(BUNDLE, 'run-cli.js'));
    expect(files).not.toContain(join(ROOT, 'dist', 'cli', 'run-cli.js'));
    const loaded = [...files, ...files.flatMap(bundledFiles)];
    const dist = (p: string): boolean => loaded.some((f) => f.includes(join(ROOT, 'dist', p)));
    const dep = (p: string): boolean =>
      loaded.some((f) => f.includes(join(ROOT, 'node_modules', p)));
    // The list is real: it holds what run needs.
    expect(dist('cli/commands/run-command.js')).toBe(true);
    expect(dist('cli/compose/start-bot.js')).toBe(true);
    expect(dep('yaml/')).toBe(true);
    // And not what it does not.
    expect(dist('cli/commands/validate-command.js')).toBe(false);
    expect(dist('cli/commands/demo-command.js')).toBe(false);
    expect(dist('sandbox/')).toBe(false);
    expect(dep('pino-pretty/')).toBe(false);
    expect(dep('jose/')).toBe(false);
    expect(dep('yauzl/')).toBe(false);
    expect(dep('ajv/dist/compile/')).toBe(false);
    // A bot on SQLite loads no PostgreSQL driver, and undici's Agent without undici's index.
    expect(dep('pg/')).toBe(false);
    expect(dep('undici/lib/dispatcher/agent.js')).toBe(true);
    expect(dep('undici/index.js')).toBe(false);
    expect(dep('undici/lib/mock/')).toBe(false);
    expect(dep('undici/lib/web/websocket/')).toBe(false);
  });

  it('runs run from the bundle only while it is at least as new as tsc output', () => {
    // bin/ledgerbot.js beside a dist/ whose two entries say which one ran.
    const dir = scope.tempDir();
    const file = (path: string, text: string): string => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
      return join(dir, path);
    };
    file('bin/ledgerbot.js', readFileSync(join(ROOT, 'bin', 'ledgerbot.js'), 'utf8'));
    file('package.json', '{ "type": "module" }\n');
    const said = (who: string): string =>
      `export async function runCli() { process.stdout.write('${who}'); return 0; }\n`;
    const tsc = file('dist/cli/run-cli.js', said('tsc'));
    const bundle = file('dist/run/run-cli.js', said('bundle'));
    const ran = (args: string[]): string =>
      spawnSync(process.execPath, [join(dir, 'bin', 'ledgerbot.js'), ...args], {
        encoding: 'utf8',
        timeout: 60_000,
      }).stdout;
    const now = Date.now() / 1000;
    utimesSync(tsc, now - 60, now - 60);
    utimesSync(bundle, now, now);
    expect(ran(['run'])).toBe('bundle');
    expect(ran(['validate'])).toBe('tsc');
    utimesSync(bundle, now - 120, now - 120); // tsc ran again, the bundle did not
    expect(ran(['run'])).toBe('tsc');
    rmSync(bundle);
    expect(ran(['run'])).toBe('tsc');
  });

  it('reads a CommonJS package loaded on demand through its default, the only export the bundle gives it', () => {
    // esbuild makes a package such as yauzl a chunk of its own that ends `export default
    // require_yauzl()`: a named import of it is undefined there, though Node's loader gives one
    // (tsc's output works; an OAuth2 token request in `run` failed with "request is not a function").
    const chunks = readdirSync(BUNDLE).filter((f) => f.endsWith('.js'));
    const defaultOnly = chunks.filter((f) =>
      /\nexport default require_\w+\(\);\n/.test(readFileSync(join(BUNDLE, f), 'utf8')),
    );
    expect(defaultOnly.some((f) => f.startsWith('yauzl-'))).toBe(true);
    for (const chunk of chunks) {
      const text = readFileSync(join(BUNDLE, chunk), 'utf8');
      for (const target of defaultOnly) {
        const imports = text.split(`import("./${target}")`).length - 1;
        const viaDefault = text.split(`(await import("./${target}")).default`).length - 1;
        expect(`${chunk} imports ${target} ${imports} times, ${viaDefault} through .default`).toBe(
          `${chunk} imports ${target} ${imports} times, ${imports} through .default`,
        );
      }
    }
  });

  it('--help loads every command (it lists them all)', () => {
    const loaded = loadedBy(['--help']);
    expect(loaded.some((f) => f.endsWith(join('dist', 'cli', 'commands', 'demo-command.js')))).toBe(
      true,
    );
  });
});
