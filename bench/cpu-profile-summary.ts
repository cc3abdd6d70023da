import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The top self-time functions of a V8 `.cpuprofile` (what `node --cpu-prof` writes), as
 * `percent  ms  function (file:line)` lines. Run alone: `npx tsx bench/cpu-profile-summary.ts FILE [N]`.
 */
type ProfileNode = {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
    readonly columnNumber?: number;
  };
};
export type Profile = {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
};

export type SelfTime = { readonly name: string; readonly ms: number; readonly percent: number };

function load(source: string | Profile): Profile {
  return typeof source === 'string'
    ? unbundled(JSON.parse(readFileSync(source, 'utf8')) as Profile)
    : source;
}

/**
 * The profile with each frame of a bundle (`ledgerbot run` starts from dist/run/, see
 * scripts/bundle-run.mjs) named by the source file and line its source map gives, so the areas
 * and functions read as they do without the bundle (src/rules/…, node_modules/yaml/…).
 */
function unbundled(profile: Profile): Profile {
  const maps = new Map<string, SourceMap | undefined>();
  const mapOf = (url: string): SourceMap | undefined => {
    if (!maps.has(url)) {
      const file = `${fileURLToPath(url)}.map`;
      maps.set(
        url,
        existsSync(file)
          ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as SourceMapPayload)
          : undefined,
      );
    }
    return maps.get(url);
  };
  const nodes = profile.nodes.map((node) => {
    const f = node.callFrame;
    if (!f.url.startsWith('file://') || !f.url.includes('/dist/run/')) return node;
    const entry = mapOf(f.url)?.findEntry(f.lineNumber, f.columnNumber ?? 0);
    if (entry === undefined || !('originalSource' in entry)) return node;
    const url = new URL(entry.originalSource, f.url).href;
    return { ...node, callFrame: { ...f, url, lineNumber: entry.originalLine } };
  });
  return { ...profile, nodes };
}

/**
 * The main thread's profile among those `node --cpu-prof` wrote into `dir` (one per thread:
 * `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`, the main thread's id 0; the bot also
 * runs its store's checkpoint thread), or undefined.
 */
export function mainThreadProfile(dir: string): string | undefined {
  const file = readdirSync(dir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  return file === undefined ? undefined : join(dir, file);
}

export function topSelfTime(source: string | Profile, top = 15): SelfTime[] {
  return selfTimeBy(source, top, (f) => {
    const where =
      f.url === ''
        ? ''
        : ` (${f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}:${f.lineNumber + 1})`;
    return `${f.functionName === '' ? '(anonymous)' : f.functionName}${where}`;
  });
}

/**
 * Self time by where the code lives: a package under node_modules, a folder of the bot's own
 * code (dist/ or src/: `rules`, `runtime`, …), node's internals, or the VM (GC, idle, program).
 */
export function selfTimeByArea(source: string | Profile, top = 12): SelfTime[] {
  return selfTimeBy(source, top, areaOf);
}

/** Sums each sample's time under the key of its frame; the `top` largest, with their share. */
function selfTimeBy(
  source: string | Profile,
  top: number,
  keyOf: (frame: ProfileNode['callFrame']) => string,
): SelfTime[] {
  const profile = load(source);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    // A sample's delta is the time since the one before; the first one's is the time since the
    // profile began, which an in-process profile spends starting the profiler (the inspector's
    // `dispatch`, 6% of the ingest profile): not a sampling interval.
    const us = i === 0 ? 0 : (profile.timeDeltas[i] ?? 0);
    total += us;
    const f = byId.get(id)?.callFrame;
    if (f === undefined) return;
    const key = keyOf(f);
    self.set(key, (self.get(key) ?? 0) + us);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({ name, ms: us / 1000, percent: (100 * us) / total }));
}

function areaOf(f: ProfileNode['callFrame']): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (pkg !== null) return pkg[1]!;
  if (f.url.includes('/dist/run/')) return 'bundle without a source position';
  const own = /\/(?:dist|src)\/([^/]+)\//.exec(f.url);
  if (own !== null) return `ledgerbot ${own[1]!}/`;
  if (f.url.startsWith('node:')) return 'node internals';
  if (f.url === '')
    return f.functionName.startsWith('(') ? f.functionName : `native ${f.functionName}`;
  return f.url.replace(/^.*\//, '');
}

/** The two views of one profile the bench sections print: by area and the top functions. */
export type ProfileSummary = {
  readonly areas: readonly SelfTime[];
  readonly top: readonly SelfTime[];
};

export function profileSummary(source: string | Profile, top = 15): ProfileSummary {
  const profile = load(source);
  return { areas: selfTimeByArea(profile), top: topSelfTime(profile, top) };
}

export function formatSelfTime(rows: readonly SelfTime[]): string[] {
  return rows.map(
    (r) => `${r.percent.toFixed(1).padStart(5)}%  ${r.ms.toFixed(0).padStart(6)} ms  ${r.name}`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of formatSelfTime(topSelfTime(process.argv[2]!, Number(process.argv[3] ?? 25))))
    console.log(line);
  console.log('');
  for (const line of formatSelfTime(selfTimeByArea(process.argv[2]!))) console.log(line);
}
