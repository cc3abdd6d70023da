import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BOT_CONFIG_DEFAULTS } from '../../src/runtime/config/bot-config-schema.js';
import { loadBotConfig } from '../../src/runtime/config/load-bot-config.js';

/**
 * The static checks of the image, which need no container engine and run with the unit tests:
 * what the Dockerfile copies exists and survives .dockerignore, the entry point exists after
 * `npm run build`, the runtime has every package the code imports, it runs as non-root, every
 * documented mount is a volume, and the health check reaches /livez on the port the documented
 * container config listens on. The health check command itself runs against a live bot in
 * test/integration/cli-ops-status.test.ts. CI also builds the image and runs it
 * (scripts/ci/image-check.sh, with buildah): the bot in the container against a sandbox, its
 * HEALTHCHECK, its user and state, and no dev dependencies or test files in the image.
 */

const ROOT = resolve(import.meta.dirname, '../..');

type Instruction = { readonly keyword: string; readonly args: string; readonly line: number };
type Stage = { readonly name: string | undefined; readonly instructions: Instruction[] };

/** Instructions with their continuation lines joined; comments and blank lines dropped. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i]!.trim();
    if (first === '' || first.startsWith('#')) continue;
    const start = i + 1;
    let joined = first;
    while (joined.endsWith('\\') && i + 1 < lines.length) {
      i += 1;
      const next = lines[i]!.trim();
      joined = joined.slice(0, -1).trimEnd() + (next.startsWith('#') ? '' : ' ' + next);
    }
    const m = /^(\S+)\s*(.*)$/.exec(joined)!;
    out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!.trim(), line: start });
  }
  return out;
}

function stagesOf(instructions: readonly Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /\s+AS\s+(\S+)$/i.exec(ins.args);
      stages.push({ name: m?.[1], instructions: [] });
    } else {
      stages[stages.length - 1]?.instructions.push(ins);
    }
  }
  return stages;
}

/** `["a", "b"]` (exec form) or `a b` (shell form, split on blanks). */
function words(args: string): string[] {
  return args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/);
}

function copyOf(ins: Instruction): { from?: string; sources: string[]; dest: string } {
  const parts = words(ins.args);
  const flags = parts.filter((p) => p.startsWith('--'));
  const paths = parts.filter((p) => !p.startsWith('--'));
  const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
  return {
    ...(from === undefined ? {} : { from }),
    sources: paths.slice(0, -1),
    dest: paths.at(-1)!,
  };
}

/** Whether a .dockerignore pattern list excludes `path` (top-level patterns and `*` globs). */
function ignored(patterns: readonly string[], path: string): boolean {
  let out = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = (negate ? raw.slice(1) : raw).replace(/^\/+/, '').replace(/\/+$/, '');
    const re = new RegExp(
      '^' +
        pattern
          .split('**/')
          .map((part) =>
            part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
          )
          .join('(?:.*/)?') +
        '(?:/.*)?$',
    );
    if (re.test(path)) out = !negate;
  }
  return out;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const instructions = parseDockerfile(text);
const stages = stagesOf(instructions);
const build = stages.find((s) => s.name === 'build');
const runtime = stages.at(-1)!;
const dockerignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function all(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

function only(stage: Stage, keyword: string): Instruction {
  const found = all(stage, keyword);
  expect(found, `${keyword} in stage ${stage.name}`).toHaveLength(1);
  return found[0]!;
}

function env(stage: Stage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const ins of all(stage, 'ENV')) {
    for (const m of ins.args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) out[m[1]!] = m[2]!.replace(/"/g, '');
  }
  return out;
}

describe('Dockerfile', () => {
  it('is multi-stage: a build stage, then a runtime stage that is the image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(build).toBeDefined();
    expect(runtime.name).toBe('runtime');
    // The build installs with the dev dependencies, compiles with the package's build script,
    // then drops them; the runtime installs nothing of its own.
    const buildRuns = all(build!, 'RUN').map((r) => r.args);
    expect(buildRuns.some((r) => /\bnpm ci\b/.test(r) && !/--omit=dev/.test(r))).toBe(true);
    expect(buildRuns.some((r) => /npm run build/.test(r) && /npm prune --omit=dev/.test(r))).toBe(
      true,
    );
    expect(pkg.scripts.build).toMatch(/tsconfig\.build\.json/);
    // ... and bundles `run` as `npm run build` does (bin/ledgerbot.js starts it from dist/run/).
    expect(pkg.scripts.build).toMatch(/node scripts\/bundle-run\.mjs/);
    expect(
      buildRuns.some((r) => /build:dist && node scripts\/bundle-run\.mjs && npm prune/.test(r)),
    ).toBe(true);
    expect(all(runtime, 'RUN').some((r) => /\bnpm (ci|install|i)\b/.test(r.args))).toBe(false);
  });

  it('installs the dependencies in a layer that depends on the lock file alone', () => {
    // Everything copied before the `npm ci` step is in its cache key: only the lock file, so an
    // edit to package.json (a script, the description) does not recompile better-sqlite3.
    const steps = build!.instructions;
    const ci = steps.findIndex((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
    expect(ci).toBeGreaterThan(0);
    const before = steps
      .slice(0, ci)
      .filter((i) => i.keyword === 'COPY')
      .flatMap((c) => copyOf(c).sources);
    expect(before).toEqual(['package-lock.json']);
    // npm ci runs against a package.json written from the lock file's root package, which holds
    // what npm ci compares with the lock file: the dependencies and dev dependencies.
    const ciStep = steps[ci]!.args;
    expect(ciStep.indexOf("packages['']")).toBeGreaterThan(-1);
    expect(ciStep.indexOf("packages['']")).toBeLessThan(ciStep.indexOf('npm ci'));
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dependencies?: unknown; devDependencies?: unknown }>;
    };
    expect(lock.packages['']!.dependencies).toEqual(pkg.dependencies);
    expect(lock.packages['']!.devDependencies).toEqual(pkg.devDependencies);
    // The real package.json (the build script) arrives after, before the build.
    const after = steps
      .slice(ci + 1)
      .filter((i) => i.keyword === 'COPY')
      .flatMap((c) => copyOf(c).sources);
    expect(after).toContain('package.json');
  });

  it('copies only what exists in the repository and is not excluded by .dockerignore', () => {
    const copies = stages.flatMap((s) =>
      all(s, 'COPY').map((c) => ({ stage: s, copy: copyOf(c) })),
    );
    expect(copies.length).toBeGreaterThan(0);
    for (const { stage, copy } of copies) {
      if (copy.from !== undefined) {
        const source = stages.find((s) => s.name === copy.from);
        expect(source, `stage ${copy.from}`).toBeDefined();
        expect(stages.indexOf(source!)).toBeLessThan(stages.indexOf(stage));
        continue;
      }
      for (const src of copy.sources) {
        expect(existsSync(join(ROOT, src)), `${src} exists`).toBe(true);
        expect(ignored(dockerignore, src), `${src} is in the build context`).toBe(false);
      }
    }
    // The sources and configs the build needs are all there.
    const buildSources = all(build!, 'COPY').flatMap((c) => copyOf(c).sources);
    for (const needed of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
    ]) {
      expect(buildSources).toContain(needed);
    }
  });

  it('copies the compiled code from the build stage where the build writes it', () => {
    const buildConfig = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    const workdir = only(build!, 'WORKDIR').args;
    const fromBuild = all(runtime, 'COPY')
      .map(copyOf)
      .filter((c) => c.from === 'build')
      .flatMap((c) => c.sources);
    expect(fromBuild).toContain(posix.join(workdir, buildConfig.compilerOptions.outDir));
    expect(fromBuild).toContain(posix.join(workdir, 'node_modules'));
    expect(buildConfig.compilerOptions.rootDir).toBe('src');
  });

  it('starts the CLI entry, which finds the compiled CLI where the build puts it', () => {
    const entrypoint = words(only(runtime, 'ENTRYPOINT').args);
    expect(entrypoint[0]).toBe('node');
    const script = entrypoint[1]!;
    expect(Object.values(pkg.bin)).toContain(script);
    const runtimeSources = all(runtime, 'COPY')
      .map(copyOf)
      .filter((c) => c.from === undefined)
      .flatMap((c) => c.sources);
    expect(runtimeSources.some((s) => script === s || script.startsWith(`${s}/`))).toBe(true);
    // bin/ledgerbot.js imports ../dist/cli/run-cli.js: dist/X.js comes from src/X.ts.
    const bin = readFileSync(join(ROOT, script), 'utf8');
    const target = /new URL\('([^']+)', import\.meta\.url\)/.exec(bin)?.[1];
    expect(target).toBeDefined();
    const distPath = relative(ROOT, resolve(dirname(join(ROOT, script)), target!));
    expect(distPath).toMatch(/^dist\//);
    const srcPath = distPath.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts');
    expect(existsSync(join(ROOT, srcPath)), srcPath).toBe(true);
    expect(words(only(runtime, 'CMD').args)).toEqual([
      'run',
      '--config',
      '/etc/ledgerbot/bot.config.yaml',
    ]);
  });

  it('has in the runtime every file the compiled code reads next to itself', () => {
    // `new URL('../../x', import.meta.url)` in src/a/b.ts reads x from dist/a/b.js: same depth.
    const copiedTop = new Set([
      'dist',
      'node_modules',
      ...all(runtime, 'COPY')
        .map(copyOf)
        .filter((c) => c.from === undefined)
        .flatMap((c) => c.sources.map((s) => s.split('/')[0]!)),
    ]);
    let reads = 0;
    for (const file of filesUnder(join(ROOT, 'src')).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(file, 'utf8');
      for (const m of source.matchAll(/new URL\(\s*'(\.[^']+)',\s*import\.meta\.url\)/g)) {
        reads += 1;
        const target = relative(ROOT, resolve(dirname(file), m[1]!));
        if (target.startsWith('src/')) continue; // compiled alongside (dist/)
        expect(copiedTop.has(target.split('/')[0]!), `${target} (read by ${file})`).toBe(true);
        expect(existsSync(join(ROOT, target)), target).toBe(true);
      }
    }
    expect(reads).toBeGreaterThan(0);
  });

  it('keeps every package the code imports in the production dependencies', () => {
    const builtins = new Set(['node']);
    const missing = new Set<string>();
    const found = new Set<string>();
    for (const file of filesUnder(join(ROOT, 'src')).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(file, 'utf8');
      for (const m of source.matchAll(
        /^\s*(?:import|export)\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?'([^'.][^']*)'|import\('([^'.][^']*)'\)|require\('([^'.][^']*)'\)/gm,
      )) {
        // import(…) and require(…): packages loaded only when used (pino-pretty) still ship.
        const spec = (m[1] ?? m[2] ?? m[3])!;
        if (spec.startsWith('node:') || builtins.has(spec)) continue;
        const name = spec.startsWith('@')
          ? spec.split('/').slice(0, 2).join('/')
          : spec.split('/')[0]!;
        found.add(name);
        if (pkg.dependencies[name] === undefined) missing.add(`${name} (${relative(ROOT, file)})`);
      }
    }
    expect([...missing]).toEqual([]);
    // The scan sees the imports (a type-only import needs no runtime package, so it is skipped).
    for (const name of ['ws', 'undici', 'pino', 'pino-pretty', 'prom-client', 'better-sqlite3']) {
      expect(found).toContain(name);
    }
  });

  it('runs as a non-root user that owns the state volume', () => {
    const user = only(runtime, 'USER').args;
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const userIndex = runtime.instructions.findIndex((i) => i.keyword === 'USER');
    const entryIndex = runtime.instructions.findIndex((i) => i.keyword === 'ENTRYPOINT');
    expect(userIndex).toBeLessThan(entryIndex);
    const volumes = all(runtime, 'VOLUME').flatMap((v) => words(v.args));
    expect(volumes).toContain('/var/lib/ledgerbot');
    const chown = all(runtime, 'RUN').some((r) =>
      new RegExp(`chown\\s+(-R\\s+)?${user}(:\\S+)?\\s+/var/lib/ledgerbot`).test(r.args),
    );
    expect(chown).toBe(true);
  });

  it('declares a volume for the config, the rules and the state: every mount the docs show', () => {
    const declared = volumes();
    const covered = (path: string): boolean =>
      declared.some((v) => path === v || path.startsWith(`${v}/`));
    const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const run = /```sh\n(docker run [\s\S]*?)```/.exec(docs)?.[1];
    expect(run).toBeDefined();
    const mounts = [...run!.matchAll(/-v\s+"?[^:\s"]+:([^:\s"]+)/g)].map((m) => m[1]!);
    expect(mounts).toEqual([
      '/etc/ledgerbot/bot.config.yaml',
      '/etc/ledgerbot/rules',
      '/var/lib/ledgerbot',
    ]);
    for (const mount of mounts) expect(covered(mount), mount).toBe(true);
    // The rules and the state have a volume of their own, so either can be mounted alone.
    expect(declared).toEqual(
      expect.arrayContaining(['/etc/ledgerbot', '/etc/ledgerbot/rules', '/var/lib/ledgerbot']),
    );
    // The default command reads its config from the config volume.
    const cmd = words(only(runtime, 'CMD').args);
    expect(covered(cmd[cmd.indexOf('--config') + 1]!)).toBe(true);
  });

  it('checks /livez with node on the port the documented container config listens on', () => {
    const health = only(runtime, 'HEALTHCHECK').args;
    const cmd = /\bCMD\s+(\[.*\])$/.exec(health)?.[1];
    expect(cmd).toBeDefined();
    const argv = JSON.parse(cmd!) as string[];
    // The node base images have no curl or wget; node is what the image surely has.
    expect(argv[0]).toBe('node');
    expect(argv.join(' ')).not.toMatch(/\b(curl|wget)\b/);
    const script = argv.at(-1)!;
    expect(script).toContain('/livez');
    expect(script).toMatch(/127\.0\.0\.1/);
    const defaultPort = /LEDGERBOT_HTTP_PORT\|\|(\d+)/.exec(script)?.[1];
    const vars = env(runtime);
    expect(vars.LEDGERBOT_HTTP_PORT).toBe(defaultPort);
    expect(words(only(runtime, 'EXPOSE').args)).toContain(defaultPort);
    // The health check script is valid JavaScript (a syntax error would mark every container
    // unhealthy): compile it without running it.
    expect(() => new Script(script, { filename: 'HEALTHCHECK' })).not.toThrow();

    // The container config of docs/operations.md, loaded as the bot would with the image's env.
    const docs = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const yaml = /A config for the container[^\n]*\n+```yaml\n([\s\S]*?)```/.exec(docs)?.[1];
    expect(yaml).toBeDefined();
    const config = loadBotConfig({
      path: '/etc/ledgerbot/bot.config.yaml',
      text: yaml!,
      env: {
        LEDGER_CLIENT_SECRET: 's',
        ISSUER_PARTY: 'issuer::1220',
        PAYER_PARTY: 'payer::1220',
        LEDGERBOT_HTTP_TOKEN: 't',
        LEDGERBOT_HTTP_PORT: vars.LEDGERBOT_HTTP_PORT,
      },
    });
    expect(String(config.http?.port)).toBe(defaultPort);
    expect(config.http?.host).toBe('0.0.0.0');
    expect(volumes()).toContain(config.state.dir);
    expect(config.rules).toEqual(['/etc/ledgerbot/rules']);
  });
});

describe('.dockerignore', () => {
  it('keeps dependencies, git, build output, local state and local secrets out of the build context', () => {
    for (const path of [
      'node_modules',
      'node_modules/ws/package.json',
      '.git',
      '.git/HEAD',
      'dist',
      'dist/cli/run-cli.js',
      BOT_CONFIG_DEFAULTS.stateDir,
      `${BOT_CONFIG_DEFAULTS.stateDir}/ledgerbot.sqlite`,
      'state.sqlite',
      'state.sqlite-wal',
      'bot.config.yaml',
      '.env',
      '.env.production',
      'certs/client.key',
      'test',
      'bench',
      // No test files in the image: the example's rule tests, any *.test.* file.
      'examples/invoices/tests/invoices.test.yaml',
      'src/rules/some.test.ts',
      'rules/x.test.yaml',
    ]) {
      expect(ignored(dockerignore, path), path).toBe(true);
    }
    // ... and lets in what the build needs.
    for (const path of [
      'package.json',
      'package-lock.json',
      'src/cli/run-cli.ts',
      'bin/ledgerbot.js',
      'scripts/bundle-run.mjs',
      'examples/invoices/model.yaml',
      'examples/invoices/rules/accept-small-invoices.yaml',
    ]) {
      expect(ignored(dockerignore, path), path).toBe(false);
    }
  });
});

function volumes(): string[] {
  return all(runtime, 'VOLUME').flatMap((v) => words(v.args));
}
