import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The Node.js versions ledgerbot says it supports (package.json `engines.node`, the README) must
 * be ones every production dependency supports: `npm install` only warns about a dependency's
 * engines, and the failure then shows up at run time. Every installed production dependency,
 * transitive ones included, is read from node_modules, walking the dependency tree the way Node
 * resolves it; the walk is cross-checked against package-lock.json.
 */

const ROOT = resolve(import.meta.dirname, '../..');

type Version = readonly [number, number, number];
type Manifest = {
  readonly name?: string;
  readonly version?: string;
  readonly engines?: unknown;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
};

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

function format(v: Version): string {
  return v.join('.');
}

/**
 * A comparator as a half-open interval [min, max) of versions; `max` undefined is unbounded.
 * Handles the forms npm writes in `engines`: `*`, `x`, partial and x-versions (`20`, `20.x`),
 * `>=`, `>`, `<=`, `<`, `=`, `^`, `~`, comparator sets joined by spaces and `||`. Anything else
 * (hyphen ranges, prereleases) throws, so a new form fails the test instead of passing unread.
 */
type Interval = { readonly min: Version; readonly max: Version | undefined };

const ANY: Interval = { min: [0, 0, 0], max: undefined };

function comparatorInterval(text: string, range: string): Interval {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$/.exec(text);
  if (m === null) throw new Error(`unsupported comparator "${text}" in engines range "${range}"`);
  const op = m[1] ?? '';
  const parts = [m[2], m[3], m[4]].map((p) =>
    p === undefined || /^[xX*]$/.test(p) ? undefined : Number(p),
  );
  // How many leading parts are given; wildcards and missing parts end the version.
  const given = parts.findIndex((p) => p === undefined);
  const n = given === -1 ? 3 : given;
  if (parts.slice(n).some((p) => p !== undefined)) {
    throw new Error(`unsupported comparator "${text}" in engines range "${range}"`);
  }
  const [major = 0, minor = 0, patch = 0] = parts;
  const low: Version = [major, minor, patch];
  // The first version after every version the partial one stands for (20.1 -> 20.2.0).
  const next: Version | undefined =
    n === 0
      ? undefined
      : n === 1
        ? [major + 1, 0, 0]
        : n === 2
          ? [major, minor + 1, 0]
          : [major, minor, patch + 1];
  switch (op) {
    case '':
    case '=':
      return n === 0 ? ANY : { min: low, max: next };
    case '>=':
      return { min: low, max: undefined };
    case '>':
      return n === 0 ? { min: [0, 0, 0], max: [0, 0, 0] } : { min: next!, max: undefined };
    case '<':
      return { min: [0, 0, 0], max: low };
    case '<=':
      return { min: [0, 0, 0], max: next };
    case '~':
      return { min: low, max: n <= 1 ? next : [major, minor + 1, 0] };
    case '^': {
      if (n === 0) return ANY;
      if (major > 0 || n === 1) return { min: low, max: [major + 1, 0, 0] };
      if (minor > 0 || n === 2) return { min: low, max: [0, minor + 1, 0] };
      return { min: low, max: [0, 0, patch + 1] };
    }
    default:
      throw new Error(`unsupported operator in "${text}" (engines range "${range}")`);
  }
}

function satisfies(version: Version, range: string): boolean {
  return range.split('||').some((alternative) => {
    // `>= 6` and `>=6` are the same comparator.
    const set = alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1');
    if (/\s-\s/.test(set)) throw new Error(`unsupported hyphen range in engines range "${range}"`);
    const comparators = set === '' ? [] : set.split(/\s+/);
    return comparators.every((c) => {
      const { min, max } = comparatorInterval(c, range);
      return compare(version, min) >= 0 && (max === undefined || compare(version, max) < 0);
    });
  });
}

function parseVersion(text: string): Version {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?$/.exec(text);
  if (m === null) throw new Error(`not a version: ${text}`);
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

type InstalledPackage = {
  /** Relative to the repository, e.g. `node_modules/pino-pretty/node_modules/sonic-boom`. */
  readonly location: string;
  readonly name: string;
  readonly version: string;
  readonly engines: string | undefined;
};

/** Where Node finds `name` when `fromDir` (a package directory) imports it, if installed. */
function resolveInstalled(fromDir: string, name: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', name);
      if (existsSync(join(candidate, 'package.json'))) return candidate;
    }
    if (dir === ROOT || dirname(dir) === dir) return undefined;
  }
}

/** The production dependency tree of the repository, as installed. */
function productionDependencies(): { packages: InstalledPackage[]; missing: string[] } {
  const seen = new Map<string, InstalledPackage>();
  const missing: string[] = [];
  const visit = (dir: string, manifest: Manifest): void => {
    const optional = new Set([
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.entries(manifest.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional === true)
        .map(([name]) => name),
    ]);
    const names = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ]);
    for (const name of names) {
      const found = resolveInstalled(dir, name);
      if (found === undefined) {
        if (!optional.has(name)) missing.push(`${name} (needed by ${manifest.name ?? dir})`);
        continue;
      }
      const location = relative(ROOT, found).split('\\').join('/');
      if (seen.has(location)) continue;
      const dep = readJson<Manifest>(join(found, 'package.json'));
      const engines =
        typeof dep.engines === 'object' && dep.engines !== null
          ? (dep.engines as { node?: unknown }).node
          : undefined;
      seen.set(location, {
        location,
        name: dep.name ?? name,
        version: dep.version ?? '?',
        engines: typeof engines === 'string' ? engines : undefined,
      });
      visit(found, dep);
    }
  };
  visit(ROOT, readJson<Manifest>(join(ROOT, 'package.json')));
  return { packages: [...seen.values()], missing };
}

const pkg = readJson<{ engines?: { node?: string } }>(join(ROOT, 'package.json'));
const declared = pkg.engines?.node ?? '';
const floorMatch = /^>=\s*(\d+\.\d+(?:\.\d+)?)$/.exec(declared);
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const readmeMatch = /Requires Node\.js >= (\d+\.\d+(?:\.\d+)?) \(([^)]*) are supported\)/.exec(
  readme,
);

describe('supported Node.js versions', () => {
  it('package.json declares a floor, engines.node = ">=X.Y[.Z]"', () => {
    expect(floorMatch, `engines.node is "${declared}"`).not.toBeNull();
  });

  it('the README states the same minimum as engines.node', () => {
    expect(
      readmeMatch,
      'README: "Requires Node.js >= X.Y (A, B and C are supported)"',
    ).not.toBeNull();
    expect(parseVersion(readmeMatch![1]!)).toEqual(parseVersion(floorMatch![1]!));
  });

  const { packages, missing } = productionDependencies();

  it('every production dependency is installed (npm ci)', () => {
    expect(missing).toEqual([]);
    expect(packages.map((p) => p.name)).toContain('@marcbachmann/cel-js');
  });

  it('the walk of node_modules finds the production packages of package-lock.json', () => {
    const lock = readJson<{
      packages: Record<string, { dev?: boolean; optional?: boolean }>;
    }>(join(ROOT, 'package-lock.json'));
    const fromLock = Object.entries(lock.packages)
      .filter(([location, entry]) => location !== '' && entry.dev !== true)
      .filter(([location, entry]) => entry.optional !== true || existsSync(join(ROOT, location)))
      .map(([location]) => location)
      .sort();
    expect(
      packages.map((p) => p.location).sort(),
      'node_modules differs from package-lock.json: run npm ci',
    ).toEqual(fromLock);
  });

  it('the lowest supported version satisfies the engines of every production dependency', () => {
    const floor = parseVersion(floorMatch![1]!);
    const refusing = packages
      .filter((p) => p.engines !== undefined && !satisfies(floor, p.engines))
      .map((p) => `${p.name}@${p.version} requires node "${p.engines}"`);
    expect(refusing, `engines.node "${declared}" admits ${format(floor)}`).toEqual([]);
  });

  it('so does the first admitted version of every major line the README supports', () => {
    const floor = parseVersion(floorMatch![1]!);
    const majors = readmeMatch![2]!.split(/,|\band\b/).map((s) => Number(s.trim()));
    expect(
      majors.every((m) => Number.isInteger(m) && m > 0),
      readmeMatch![2],
    ).toBe(true);
    expect(majors).toContain(floor[0]);
    for (const major of majors) {
      const first: Version = major === floor[0] ? floor : [major, 0, 0];
      expect(satisfies(first, declared), `engines.node "${declared}" admits ${major}`).toBe(true);
      const refusing = packages
        .filter((p) => p.engines !== undefined && !satisfies(first, p.engines))
        .map((p) => `${p.name}@${p.version} requires node "${p.engines}"`);
      expect(refusing, `Node.js ${format(first)}`).toEqual([]);
    }
  });
});

describe('satisfies (the engines range check above)', () => {
  it.each([
    ['20.19.0', '>=20.19.0', true],
    ['20.18.3', '>=20.19.0', false],
    ['20.19.0', '>=20.19', true],
    ['20.18.1', '>=20.18.1', true],
    ['20.18.0', '>=20.18.1', false],
    ['20.19.0', '20.x || 22.x || 23.x || 24.x', true],
    ['21.7.0', '20.x || 22.x || 23.x || 24.x', false],
    ['25.0.0', '20.x || 22.x || 23.x || 24.x', false],
    ['20.0.0', '^16 || ^18 || >=20', true],
    ['19.9.0', '^16 || ^18 || >=20', false],
    ['16.20.0', '^16 || ^18 || >=20', true],
    ['20.19.0', '>= 6', true],
    ['20.19.0', '>= 10.x', true],
    ['14.5.0', '>= 14.6', false],
    ['20.19.0', '*', true],
    ['20.19.0', '>=14 <20', false],
    ['19.9.9', '>=14 <20', true],
    ['20.19.0', '<=20', true],
    ['21.0.0', '<=20', false],
    ['20.19.0', '~20.18', false],
    ['20.18.9', '~20.18', true],
    ['0.10.5', '^0.10.0', true],
    ['0.11.0', '^0.10.0', false],
    ['20.0.0', '>19', true],
    ['19.9.0', '>19', false],
  ] as const)('%s in "%s": %s', (version, range, expected) => {
    expect(satisfies(parseVersion(version), range)).toBe(expected);
  });

  it('refuses forms it does not know', () => {
    expect(() => satisfies([20, 0, 0], '18 - 20')).toThrow(/hyphen/);
    expect(() => satisfies([20, 0, 0], '>=20.0.0-rc.1')).toThrow(/unsupported/);
  });
});
