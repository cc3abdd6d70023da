import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  benchDocPath,
  benchSection,
  commandLine,
  machineLine,
  startLoadLine,
  writeSection,
} from './bench-support.js';
import { formatSelfTime, profileSummary, type ProfileSummary } from './cpu-profile-summary.js';
import { median } from './section-text.js';

/**
 * Reading Daml packages: `readDar` on the three shared DARs (../shared/daml-lf/dars: SDK 3.3,
 * 3.4 and 3.5 builds, 91 packages), the time from bytes in memory to every package's signature.
 * Cold: the first reads in a fresh `node` process (the built dist/, no tsx), importing the reader
 * timed apart; warm: the median of repeated reads in one process after those. Target: all three
 * under 300 ms. A cold run is profiled (`node --cpu-prof`) and its top self time printed, so a
 * miss shows where the time goes. Without ../shared the section says so and measures nothing.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DARS_DIR = join(ROOT, '..', 'shared', 'daml-lf', 'dars');
const DARS = [
  'all-kinds-of.dar',
  'DamlDefinitionsServiceMain.dar',
  'canton-builtin-admin-workflow-party-replication-alpha.dar',
] as const;
/** Informational: the Canton Network's token, the largest real DAR at hand. */
const EXTRA = 'splice-amulet-0.1.14.dar';
const TARGET_MS = 300;

type ChildResult = {
  readonly importMs: number;
  /** First read of each DAR, in DARS order (then EXTRA). */
  readonly coldMs: readonly number[];
  /** Median of `rounds` reads of all three after the cold ones. */
  readonly warmMs: number;
  readonly warmEachMs: readonly number[];
  readonly packages: number;
  readonly extraColdMs: number;
  readonly extraPackages: number;
};

export type PackagesBenchResult =
  | { readonly skipped: string }
  | {
      readonly runs: readonly ChildResult[];
      readonly rounds: number;
      readonly profile: ProfileSummary | undefined;
    };

/** The child: reads the files first (not timed), then imports the reader and reads each DAR. */
function childSource(rounds: number): string {
  const reader = pathToFileURL(join(ROOT, 'dist/daml-lf/read-dar.js')).href;
  return `
import { readFileSync } from 'node:fs';
const files = ${JSON.stringify([...DARS, EXTRA].map((d) => join(DARS_DIR, d)))};
const bytes = files.map((f) => readFileSync(f));
const t0 = performance.now();
const { readDar } = await import(${JSON.stringify(reader)});
const importMs = performance.now() - t0;
const coldMs = [];
let packages = 0;
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const dar = await readDar(bytes[i], { source: files[i] });
  coldMs.push(performance.now() - t);
  packages += dar.packages.length;
}
const all = [];
const each = [[], [], []];
for (let r = 0; r < ${rounds}; r++) {
  const start = performance.now();
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await readDar(bytes[i], { source: files[i] });
    each[i].push(performance.now() - t);
  }
  all.push(performance.now() - start);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const t = performance.now();
const extra = await readDar(bytes[3], { source: files[3] });
const extraColdMs = performance.now() - t;
console.log(JSON.stringify({
  importMs, coldMs, warmMs: median(all), warmEachMs: each.map(median), packages,
  extraColdMs, extraPackages: extra.packages.length,
}));
`;
}

async function runChild(rounds: number, nodeArgs: readonly string[] = []): Promise<ChildResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...nodeArgs, '--input-type=module', '-e', childSource(rounds)],
    { cwd: ROOT, timeout: 120_000, maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!) as ChildResult;
}

export async function runPackagesBench(options: {
  readonly runs: number;
  readonly rounds: number;
  readonly profile: boolean;
}): Promise<PackagesBenchResult> {
  const missing = [...DARS, EXTRA].filter((d) => !existsSync(join(DARS_DIR, d)));
  if (missing.length > 0) return { skipped: `../shared/daml-lf/dars has no ${missing.join(', ')}` };
  const runs: ChildResult[] = [];
  for (let i = 0; i < options.runs; i++) runs.push(await runChild(options.rounds));
  let profile: ProfileSummary | undefined;
  if (options.profile) {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-packages-prof-'));
    try {
      await runChild(1, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100']);
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (file !== undefined) profile = profileSummary(join(dir, file), 12);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { runs, rounds: options.rounds, profile };
}

const ms = (x: number): string => `${x.toFixed(0)} ms`;
const verdict = (x: number): string => (x < TARGET_MS ? `${ms(x)}: met` : `${ms(x)}: NOT met`);

export function packagesSection(r: PackagesBenchResult, load: number): string {
  const head = [
    '## Packages',
    '',
    machineLine(),
    startLoadLine(load),
    commandLine('packages', '`bench/packages-bench.ts`'),
  ];
  if ('skipped' in r) {
    return benchSection('packages', [...head, '', `Not measured: ${r.skipped}.`]);
  }
  const cold = DARS.map((_, i) => median(r.runs.map((x) => x.coldMs[i] ?? NaN)));
  const coldAll = median(r.runs.map((x) => x.coldMs.reduce((a, b) => a + b, 0)));
  const warmEach = DARS.map((_, i) => median(r.runs.map((x) => x.warmEachMs[i] ?? NaN)));
  const warmAll = median(r.runs.map((x) => x.warmMs));
  const importMs = median(r.runs.map((x) => x.importMs));
  const first = r.runs[0]!;
  const lines = [
    ...head,
    `\`readDar\` from the bytes in memory to every package's signature (zip read, hashes checked, the
packages decoded, signatures built), for the three shared DARs: ${DARS.map((d) => `\`${d}\``).join(', ')}
(${first.packages} packages). Cold: the first read of each in a fresh \`node\` process running the built
\`dist/\` (median of ${r.runs.length} processes); importing the reader is timed apart. Warm: the median of
${r.rounds} reads of all three in the same process afterwards.`,
    '',
    '| | all three | all-kinds-of | DamlDefinitionsServiceMain | party-replication |',
    '|---|---:|---:|---:|---:|',
    `| cold (fresh process) | ${ms(coldAll)} | ${cold.map(ms).join(' | ')} |`,
    `| warm | ${ms(warmAll)} | ${warmEach.map(ms).join(' | ')} |`,
    '',
    `Importing the reader (and its dependencies) in the fresh process: ${ms(importMs)}. For scale,
\`${EXTRA}\` (${first.extraPackages} packages, the Canton Network's token with the token standard) read
after the others in the same process: ${ms(median(r.runs.map((x) => x.extraColdMs)))}.`,
    '',
    `Target: all three under ${TARGET_MS} ms. Cold ${verdict(coldAll)}; warm ${verdict(warmAll)}.`,
  ];
  if (r.profile !== undefined) {
    lines.push(
      '',
      'Profile of one more fresh process (`node --cpu-prof`, untimed; import, cold and one warm read), self time:',
      '',
      '```text',
      ...formatSelfTime(r.profile.areas.slice(0, 8)),
      '',
      ...formatSelfTime(r.profile.top.slice(0, 12)),
      '```',
    );
  }
  return benchSection('packages', lines);
}

/** The section, run and written: what bench/run.ts calls. */
export async function runPackagesSection(options: {
  readonly runs: number;
  readonly rounds: number;
  readonly profile: boolean;
}): Promise<void> {
  const load = loadavg()[0] ?? 0;
  const r = await runPackagesBench(options);
  if ('skipped' in r) console.log(`packages: skipped (${r.skipped})`);
  else {
    const all = median(r.runs.map((x) => x.coldMs.reduce((a, b) => a + b, 0)));
    console.log(
      `packages: all three DARs cold ${ms(all)}, warm ${ms(median(r.runs.map((x) => x.warmMs)))}`,
    );
  }
  writeSection('packages', packagesSection(r, load));
  console.log(`wrote the packages section of ${benchDocPath()}`);
}
