import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * ledgerbot as a user gets it: `npm pack` the repository (its `prepare` script builds dist/),
 * install the tarball into an empty project, then run the CLI through `npx`, load the library,
 * and type-check a program against the shipped declarations. Slow (the install compiles
 * better-sqlite3 when no prebuilt binary fits: 2-3 minutes), so it runs with `npm run test:slow`,
 * not `npm test`. LEDGERBOT_KEEP_PACK_DIR=1 keeps the temporary project for a look afterwards.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

type PackedFile = { readonly path: string };
type PackResult = { readonly filename: string; readonly files: readonly PackedFile[] };
type Run = { readonly status: number | null; readonly stdout: string; readonly stderr: string };

/**
 * The environment of the npm and npx children: without the npm_* variables of an enclosing
 * `npm run` (npm_config_local_prefix would make the nested install target this repository),
 * keeping the ones that say where the cache, registry and config are.
 */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const keep = new Set([
    'npm_config_cache',
    'npm_config_userconfig',
    'npm_config_globalconfig',
    'npm_config_registry',
    'npm_config_cafile',
    'npm_config_nodedir',
  ]);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase();
    if ((lower.startsWith('npm_') && !keep.has(lower)) || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, NO_COLOR: '1', npm_config_update_notifier: 'false', ...extra };
}

const timings: [step: string, ms: number][] = [];

function run(
  step: string,
  command: string,
  args: readonly string[],
  options: { cwd: string; timeoutMs: number; env?: Record<string, string> },
): Run {
  const started = Date.now();
  const r = spawnSync(command, args, {
    cwd: options.cwd,
    env: childEnv(options.env),
    encoding: 'utf8',
    timeout: options.timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  timings.push([step, Date.now() - started]);
  if (r.error !== undefined) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The status with the output attached, so a failing expectation shows what the command said. */
function outcome(r: Run): string {
  return `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/**
 * Compiled, never run: it uses the documented API the way README.md and docs/*.md show it, and
 * the @ts-expect-error lines fail the compilation if the shipped types degrade to `any`.
 */
const CONSUMER = `import { readFile } from 'node:fs/promises';
import {
  LedgerClient,
  RuleError,
  classify,
  createAuthProvider,
  createBot,
  eventFormat,
  formatRuleProblem,
  loadRules,
  loadRulesOrThrow,
  openSqliteStore,
  startSandbox,
  transactionFormat,
  updateFormat,
  type Bot,
  type BotOptions,
  type Classification,
  type RuleFile,
  type Sandbox,
} from 'ledgerbot';

export async function main(): Promise<number> {
  const files: RuleFile[] = [
    { path: 'accept.yaml', text: await readFile('invoices/rules/accept-small-invoices.yaml', 'utf8') },
  ];
  const { problems } = loadRules(files, { parties: ['issuer', 'payer'] });
  for (const p of problems) console.log(formatRuleProblem(p), p.line, p.col);
  if (problems.some((p) => p.severity === 'error')) return 2;

  const sandbox: Sandbox = await startSandbox({
    models: ['invoices/model.yaml'],
    parties: ['issuer', 'payer'],
    users: ['alice-bot:issuer', { id: 'auditor', readAs: ['payer'] }],
    auth: 'none',
    seed: 42,
    maxDedup: '7d',
  });
  const parties: Record<string, string> = { ...sandbox.parties };
  const client = await LedgerClient.create({
    url: sandbox.url,
    auth: createAuthProvider({ type: 'static', token: 'not-checked' }),
    requestTimeoutMs: 30_000,
  });
  const end: number = await client.ledgerEnd();
  // @ts-expect-error the ledger end is a number
  const wrong: string = await client.ledgerEnd();
  void wrong;
  const format = updateFormat({
    transactions: transactionFormat(
      eventFormat({ parties: Object.values(parties), templates: ['#invoices:Invoice:Invoice'] }),
      'TRANSACTION_SHAPE_LEDGER_EFFECTS',
    ),
  });
  for await (const u of client.updates({ beginExclusive: end, updateFormat: format })) {
    if (u.kind === 'transaction') console.log(u.offset, u.transaction.updateId);
    break;
  }

  const options: BotOptions = {
    rules: loadRulesOrThrow(files, { parties }),
    parties,
    userId: 'ledgerbot',
    ledger: client,
    store: openSqliteStore({ dir: '.state', groupCommit: true }),
  };
  // @ts-expect-error userId is required
  const incomplete: BotOptions = { rules: options.rules, parties, ledger: client, store: options.store };
  void incomplete;
  const bot: Bot = createBot(options);
  bot.events.on('offset', (offset) => console.log(offset.toFixed(0)));
  await bot.start();
  await bot.stop();
  await sandbox.stop();

  try {
    loadRulesOrThrow([{ path: 'bad.yaml', text: 'version: 2' }]);
  } catch (err) {
    if (err instanceof RuleError) console.log(err.message);
    const c: Classification = classify(err);
    if (c === 'final') return 1;
  }
  return 0;
}
`;

/** Loads the package entry and every module of dist/: nothing may import a devDependency. */
const SMOKE = `import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const lib = await import('ledgerbot');
const dist = join(process.cwd(), 'node_modules', 'ledgerbot', 'dist');
const modules = readdirSync(dist, { recursive: true }).filter((f) => String(f).endsWith('.js'));
for (const m of modules) await import(pathToFileURL(join(dist, String(m))).href);
const kinds = {};
for (const name of ['loadRules', 'createBot', 'startSandbox', 'LedgerClient', 'openSqliteStore', 'createAuthProvider', 'classify']) {
  kinds[name] = typeof lib[name];
}
console.log(JSON.stringify({ modules: modules.length, kinds }));
`;

describe('the packed package, installed into an empty project', () => {
  let dir = '';
  let project = '';
  let packed: PackResult;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    main: string;
    types: string;
    bin: Record<string, string>;
    exports: Record<string, Record<string, string>>;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerbot-pack-'));
    project = join(dir, 'project');
    mkdirSync(join(dir, 'pack'));
    mkdirSync(join(project, 'tmp'), { recursive: true });

    // `prepare` builds dist/ first.
    const pack = run(
      'npm pack',
      'npm',
      ['pack', '--json', '--pack-destination', join(dir, 'pack')],
      {
        cwd: ROOT,
        timeoutMs: 300_000,
      },
    );
    expect(pack.status, outcome(pack)).toBe(0);
    packed = (JSON.parse(pack.stdout) as PackResult[])[0]!;

    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify(
        { name: 'ledgerbot-consumer', version: '1.0.0', private: true, type: 'module' },
        null,
        2,
      ),
    );
    const install = run(
      'npm install <tarball>',
      'npm',
      [
        'install',
        join(dir, 'pack', packed.filename),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      { cwd: project, timeoutMs: 900_000 },
    );
    expect(install.status, outcome(install)).toBe(0);
    // This Node.js outside some dependency's engines.node (see test/packaging/engines.test.ts).
    expect(install.stderr, outcome(install)).not.toMatch(/EBADENGINE/);
    cpSync(
      join(project, 'node_modules', 'ledgerbot', 'examples', 'invoices'),
      join(project, 'invoices'),
      {
        recursive: true,
      },
    );
  }, 1_200_000);

  afterAll(() => {
    console.log(
      'pack-install timings:\n' +
        timings.map(([step, ms]) => `  ${step.padEnd(40)} ${(ms / 1000).toFixed(1)} s`).join('\n'),
    );
    if (dir !== '' && process.env['LEDGERBOT_KEEP_PACK_DIR'] !== '1') {
      rmSync(dir, { recursive: true, force: true });
    } else if (dir !== '') {
      console.log(`kept ${dir}`);
    }
  });

  const paths = (): string[] => packed.files.map((f) => f.path);

  it('ships the entry points package.json names, the README and what the CLI reads', () => {
    const targets = [
      pkg.main,
      pkg.types,
      ...Object.values(pkg.bin),
      ...Object.values(pkg.exports).flatMap((conditions) => Object.values(conditions)),
    ].map((p) => p.replace(/^\.\//, ''));
    const needed = [
      'package.json',
      'README.md',
      'dist/cli/run-cli.js',
      'schema/rules.schema.json',
      'bot.config.yaml',
      'examples/invoices/bot.config.yaml',
      'examples/invoices/model.yaml',
    ];
    expect([...targets, ...needed].filter((p) => !paths().includes(p))).toEqual([]);
  });

  it('ships every file the README links to', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((l) => !/^[a-z]+:/i.test(l));
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((l) => !paths().includes(l.replace(/^\.\//, '')))).toEqual([]);
  });

  it('ships no sources, tests, tooling or local state', () => {
    const unwanted = paths().filter(
      (p) =>
        /^(src|test|bench|scripts|coverage|node_modules|\.ci|\.github|\.state)\//.test(p) ||
        /^(tsconfig.*\.json|eslint\.config\.js|vitest.*\.ts|Dockerfile|\.dockerignore)$/.test(p) ||
        /\.(sqlite(-\w+)?|tsbuildinfo|log)$/.test(p),
    );
    expect(unwanted).toEqual([]);
  });

  it('ships no stale build output: every dist module has its source', () => {
    // dist/run/ is the bundle of `run` (scripts/bundle-run.mjs): its files are made of tsc's.
    const compiled = (p: string): boolean =>
      existsSync(join(ROOT, 'src', p.slice('dist/'.length).replace(/\.js$/, '.ts')));
    const stale = paths()
      .filter((p) => p.startsWith('dist/') && !p.startsWith('dist/run/') && p.endsWith('.js'))
      .filter((p) => !compiled(p));
    expect(stale).toEqual([]);
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist', 'run', 'meta.json'), 'utf8')) as {
      inputs: Record<string, unknown>;
    };
    const bundled = Object.keys(meta.inputs).filter((p) => p.startsWith('dist/'));
    expect(bundled).toContain('dist/cli/run-cli.js');
    expect(bundled.filter((p) => !compiled(p))).toEqual([]);
    expect(paths()).toContain('dist/run/run-cli.js');
  });

  it('`npx ledgerbot --help` and `--version` work', () => {
    const help = run('npx ledgerbot --help', 'npx', ['--no', '--', 'ledgerbot', '--help'], {
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(help.status, outcome(help)).toBe(0);
    expect(help.stdout).toMatch(/Usage: ledgerbot <command>/);
    const version = run(
      'npx ledgerbot --version',
      'npx',
      ['--no', '--', 'ledgerbot', '--version'],
      {
        cwd: project,
        timeoutMs: 60_000,
      },
    );
    expect(version.status, outcome(version)).toBe(0);
    expect(version.stdout.trim()).toBe(pkg.version);
  });

  it('`npx ledgerbot validate` accepts a copy of the example config', () => {
    const r = run(
      'npx ledgerbot validate',
      'npx',
      ['--no', '--', 'ledgerbot', 'validate', '--config', 'invoices/bot.config.yaml'],
      { cwd: project, timeoutMs: 60_000 },
    );
    expect(r.status, outcome(r)).toBe(0);
    expect(r.stdout).toMatch(/valid/);
  });

  it("`npx ledgerbot test` passes the example's rule tests", () => {
    const r = run(
      'npx ledgerbot test',
      'npx',
      ['--no', '--', 'ledgerbot', 'test', 'invoices/tests'],
      {
        cwd: project,
        timeoutMs: 60_000,
      },
    );
    expect(r.status, outcome(r)).toBe(0);
    expect(r.stdout).toMatch(/\b0 failed\b/);
  });

  it('`npx ledgerbot demo` runs the sandbox and the bot (SQLite included) from the package', () => {
    const r = run(
      'npx ledgerbot demo --duration 2s',
      'npx',
      ['--no', '--', 'ledgerbot', 'demo', '--duration', '2s', '--port', '0'],
      { cwd: project, timeoutMs: 90_000, env: { TMPDIR: join(project, 'tmp') } },
    );
    expect(r.status, outcome(r)).toBe(0);
    expect(r.stdout).toMatch(/Summary after/);
  });

  it('the README\'s "Start a project of your own" works: init, then validate and test in it', () => {
    const npx = (step: string, cwd: string, args: readonly string[]): void => {
      const r = run(step, 'npx', ['--no', '--', 'ledgerbot', ...args], { cwd, timeoutMs: 60_000 });
      expect(r.status, `${step}: ${outcome(r)}`).toBe(0);
    };
    npx('npx ledgerbot init my-bot --embedded', project, ['init', 'my-bot', '--embedded']);
    const bot = join(project, 'my-bot');
    expect(existsSync(join(bot, 'schema', 'rules.schema.json'))).toBe(true);
    npx('npx ledgerbot validate (init project)', bot, ['validate', '--config', 'bot.config.yaml']);
    npx('npx ledgerbot test (init project)', bot, ['test', 'tests']);
  });

  it('the library loads: the entry and every dist module, with production dependencies only', () => {
    writeFileSync(join(project, 'smoke.mjs'), SMOKE);
    const r = run('node smoke.mjs', process.execPath, ['smoke.mjs'], {
      cwd: project,
      timeoutMs: 60_000,
    });
    expect(r.status, outcome(r)).toBe(0);
    const result = JSON.parse(r.stdout) as { modules: number; kinds: Record<string, string> };
    expect(result.modules).toBeGreaterThan(100);
    expect(new Set(Object.values(result.kinds))).toEqual(new Set(['function']));
  });

  it('a program using the documented API compiles against the shipped types (tsc --noEmit)', () => {
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'src', 'consumer.ts'), CONSUMER);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            exactOptionalPropertyTypes: true,
            noUncheckedIndexedAccess: true,
            noEmit: true,
            // The shipped declarations and those of the dependencies are checked too.
            skipLibCheck: false,
            types: ['node'],
            // The project installs no @types/node of its own: the repository's is used.
            typeRoots: [join(ROOT, 'node_modules', '@types')],
          },
          include: ['src'],
        },
        null,
        2,
      ),
    );
    const r = run('tsc --noEmit', process.execPath, [TSC, '-p', 'tsconfig.json'], {
      cwd: project,
      timeoutMs: 120_000,
    });
    expect(r.status, outcome(r)).toBe(0);
  });
});
