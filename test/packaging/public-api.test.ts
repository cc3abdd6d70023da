import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * What `import … from 'ledgerbot'` offers (src/index.ts): every name the README and docs/*.md
 * import from the package, the errors its public functions throw, and none of the internals
 * the docs do not rely on. The names come from the type checker, so types count as well as
 * values. test/slow/pack-install.test.ts compiles a consumer against the packed package.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const INDEX = join(ROOT, 'src/index.ts');

function exportsOfIndex(): Set<string> {
  const program = ts.createProgram([INDEX], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(INDEX)!)!;
  return new Set(checker.getExportsOfModule(module).map((s) => s.name));
}

/** The names of each `import { … } from 'ledgerbot'` in the README and docs/. */
function documentedImports(): Map<string, string> {
  const files = [
    join(ROOT, 'README.md'),
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(ROOT, 'docs', f)),
  ];
  const names = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'ledgerbot'/g)) {
      for (const part of m[1]!.split(',')) {
        const name = part.replace(/^\s*type\s+/, '').trim();
        if (name !== '') names.set(name, file.slice(ROOT.length + 1));
      }
    }
  }
  return names;
}

const exported = exportsOfIndex();

describe('the public API (src/index.ts)', () => {
  it('exports every name the README and docs/ import from the package', () => {
    const documented = documentedImports();
    expect(documented.size).toBeGreaterThan(5);
    const missing = [...documented].filter(([name]) => !exported.has(name));
    expect(missing).toEqual([]);
  });

  it('exports the everyday API and the testing helpers', () => {
    for (const name of [
      'createBot',
      'loadRules',
      'loadRulesOrThrow',
      'startSandbox',
      'LedgerClient',
      'openSqliteStore',
      'FakeClock',
      'SeededRandom',
      // A catalogue of Daml packages for loadRules's `packages`.
      'PackageCatalogue',
      'readDar',
      'readDalf',
      'readPackagePayload',
      'loadModels',
      'modelSignature',
      'ParticipantPackageSource',
    ]) {
      expect(exported.has(name), name).toBe(true);
    }
  });

  it('exports every error its public functions throw', () => {
    for (const name of [
      'LedgerbotError',
      'LedgerApiError',
      'LedgerTransportError',
      'LedgerUsageError',
      'AuthError',
      'AbortError',
      'IllegalStateError',
      'RuleError',
      'RuntimeError',
      'StoreError',
      'SandboxConfigError',
      'ModelError',
      'DamlLfError',
    ]) {
      expect(exported.has(name), name).toBe(true);
    }
  });

  it('keeps internals out', () => {
    for (const name of [
      'WsRequestStream',
      'ResumableStream',
      'indexRules',
      'ScheduleDriver',
      'streamUpdates',
      'streamCompletions',
      'createHttpTransport',
    ]) {
      expect(exported.has(name), name).toBe(false);
    }
  });
});
