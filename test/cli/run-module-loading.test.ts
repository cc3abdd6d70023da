import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../integration/child-bot.js';
import { TestScope } from '../support/test-scope.js';

// What `ledgerbot run` loads before it reads its config: its own command and what a bot against
// a participant needs, not the other commands, the sandbox, the sandbox's model loader,
// pino-pretty or ajv's compiler (start-up is a benchmarked target). The child lists every module
// it loaded (ES modules through a load hook, CommonJS ones from require.cache) when it exits.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

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

describe('ledgerbot run: module loading', () => {
  it('loads its own command and what a bot against a participant needs, nothing else', () => {
    const dir = scope.tempDir();
    const config = join(dir, 'bot.config.yaml');
    writeFileSync(config, 'ledger: { url: "http://127.0.0.1:9" }\n'); // invalid: exits 2 at once
    const loaded = loadedBy(['run', '--config', config]);
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
  });

  it('--help loads every command (it lists them all)', () => {
    const loaded = loadedBy(['--help']);
    expect(loaded.some((f) => f.endsWith(join('dist', 'cli', 'commands', 'demo-command.js')))).toBe(
      true,
    );
  });
});
