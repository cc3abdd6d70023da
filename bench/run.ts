import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  BENCH_DOC,
  benchCommand,
  benchDocPath,
  codeRevision,
  benchSection,
  commandLine,
  machineLine,
  setBenchCommand,
  setBenchDoc,
  startLoadLine,
  writeSection,
} from './bench-support.js';
import { profileSummary } from './cpu-profile-summary.js';
import { IN_FLIGHT, runE2eBench } from './e2e-bench.js';
import { e2eSection, ingestSection } from './end-to-end-sections.js';
import { profileIngest, runIngestBench } from './ingest-bench.js';
import { runMemoryBench, writeMemorySvg } from './memory-bench.js';
import { memorySection } from './memory-section.js';
import { runPackagesSection } from './packages-bench.js';
import { startInvoiceLedger } from './invoice-ledger.js';
import { recordFrames, type Recording } from './recorded-frames.js';
import { runRulesSection } from './rules-bench.js';
import { runSandboxBench, type SandboxBenchRow } from './sandbox-bench.js';
import type { SectionContext } from './section-text.js';
import { runScheduleSection } from './schedule-bench.js';
import { runStartupBench } from './startup-bench.js';
import { startupSection } from './startup-section.js';

/**
 * `npm run bench`: runs the benchmark sections and rewrites their part of docs/benchmarks.md.
 * Each section owns the text between its start and end markers, so sections can be added
 * without touching one another.
 *
 *   npm run bench                         every section, full size (8 minutes on 2 cores here)
 *   npm run bench -- --only e2e,memory    just these sections
 *   npm run bench -- --smoke              every section small (about a minute, for CI); writes a
 *                                         copy of the doc (and the memory plot) to
 *                                         $TMPDIR/ledgerbot-bench-smoke/, not docs/. Fails on
 *                                         errors, never on ratios.
 *   npm run bench -- --rerender           rewrite the ingest, e2e, memory and start-up sections from
 *                                         the results the last run saved in the temp directory
 *                                         (after editing their text), without measuring again
 */
const SECTIONS = [
  'sandbox',
  'rules',
  'schedule',
  'ingest',
  'e2e',
  'memory',
  'startup',
  'packages',
] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean' },
    only: { type: 'string' },
    rerender: { type: 'boolean' },
  },
  strict: true,
});
const smoke = values.smoke === true || process.env.BENCH_SMOKE === '1';
const only = (values.only ?? SECTIONS.join(',')).split(',').map((s) => s.trim());
for (const s of only) {
  if (!(SECTIONS as readonly string[]).includes(s)) {
    throw new Error(`--only: unknown section "${s}"; sections: ${SECTIONS.join(', ')}`);
  }
}
const rerender = values.rerender === true;
const RERENDERED: readonly Section[] = ['ingest', 'e2e', 'memory', 'startup'];
const selected = (s: Section): boolean => only.includes(s) && (!rerender || RERENDERED.includes(s));
const flags = [
  ...(smoke ? ['--smoke'] : []),
  ...(values.only === undefined ? [] : ['--only', values.only]),
];
// Right after `npm run build`: the code that dist/ (the bot child) was built from.
const CODE = codeRevision();
setBenchCommand(`npm run bench${flags.length > 0 ? ` -- ${flags.join(' ')}` : ''}`, CODE);

/** Sizes per section: the issue's in the full run; in the smoke run just enough to run every path. */
const SIZES = smoke
  ? {
      sandbox: { maxMs: 500, maxCount: 1_000 },
      rulesSeconds: '0.2',
      // json-rules-engine runs 1,000 rules at ~20 events/s: its warm-up alone would take 10 s.
      rulesSizes: [1, 100],
      schedule: { everyOne: 500, oneInHundred: 2_000 },
      recordedInvoices: 120,
      ingest: { events: 10_000, rounds: 2, profileEvents: 5_000 },
      e2e: { n: 300, rounds: 1, paced: { count: 50, perSecond: 100 } },
      memoryEvents: 20_000,
      startup: { runs: 1, rules: 1_000, profile: false },
      packages: { runs: 1, rounds: 3, profile: false },
    }
  : {
      sandbox: { maxMs: Number(process.env.BENCH_SECONDS ?? '8') * 1000, maxCount: 50_000 },
      rulesSeconds: undefined,
      rulesSizes: undefined,
      schedule: undefined,
      recordedInvoices: 1_200,
      ingest: { events: 1_000_000, rounds: 2, profileEvents: 100_000 },
      e2e: { n: 20_000, rounds: 2, paced: { count: 2_000, perSecond: 200 }, profileN: 10_000 },
      memoryEvents: 1_000_000,
      startup: { runs: 5, rules: 1_000, profile: true },
      packages: { runs: 5, rounds: 20, profile: true },
    };

if (smoke) {
  // One place, written over by each smoke run (as the results are), so runs leave no trail.
  const dir = join(tmpdir(), 'ledgerbot-bench-smoke');
  mkdirSync(dir, { recursive: true });
  const copy = join(dir, 'benchmarks.md');
  if (existsSync(BENCH_DOC)) copyFileSync(BENCH_DOC, copy);
  setBenchDoc(copy);
}
if (SIZES.rulesSeconds !== undefined) process.env.BENCH_RULES_SECONDS ??= SIZES.rulesSeconds;
const context = (): SectionContext => ({ load: loadavg()[0] ?? 0 });

/**
 * A section's measurements are saved (with the command and load they were taken under) before
 * its text is written, so `--rerender` can write the text again without measuring.
 */
type Saved<T> = {
  readonly command: string;
  readonly code: string;
  readonly context: SectionContext;
  readonly data: T;
};
const RESULTS = join(tmpdir(), `ledgerbot-bench-results${smoke ? '-smoke' : ''}`);

async function measured<T>(name: Section, measure: () => Promise<T>): Promise<Saved<T>> {
  const file = join(RESULTS, `${name}.json`);
  if (rerender) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Saved<T>;
    setBenchCommand(saved.command, saved.code);
    return saved;
  }
  const c = context();
  const saved: Saved<T> = {
    command: benchCommand(),
    code: CODE,
    context: c,
    data: await measure(),
  };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(file, JSON.stringify(saved));
  return saved;
}

const timings: string[] = [];
/** Runs one section if selected, and logs how long it took. */
async function section(name: Section, run: () => Promise<void>): Promise<void> {
  if (!selected(name)) return;
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  timings.push(`${name} ${seconds.toFixed(1)} s`);
  console.log(`section ${name}: ${seconds.toFixed(1)} s`);
}

function table(rows: readonly SandboxBenchRow[], load: number): string {
  return benchSection('sandbox', [
    '## Sandbox',
    '',
    machineLine(),
    startLoadLine(load),
    commandLine('sandbox', '`bench/sandbox-bench.ts`'),
    'The sandbox runs as its own process (`ledgerbot sandbox`); the load generator uses undici and `ws`.',
    'Each command: CreateAndExercise of `Invoice:Invoice` with the consuming `Cancel` choice (one create, one exercise).',
    '',
    '| scenario | count | seconds | per second |',
    '|---|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.count} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} |`,
    ),
  ]);
}

await section('sandbox', async () => {
  const load = loadavg()[0] ?? 0;
  const rows = await runSandboxBench(SIZES.sandbox);
  for (const r of rows)
    console.log(
      `${r.scenario}: ${Math.round(r.perSecond)}/s (${r.count} in ${r.seconds.toFixed(2)} s)`,
    );
  writeSection('sandbox', table(rows, load));
  console.log(`wrote the sandbox section of ${benchDocPath()}`);
});

// The rules and schedule sections write their own part of the doc.
await section('rules', () => runRulesSection(SIZES.rulesSizes));
await section('schedule', () => runScheduleSection(SIZES.schedule));

let recording: Recording | undefined;
async function frames(): Promise<Recording> {
  if (recording === undefined) {
    const l = await startInvoiceLedger();
    try {
      recording = await recordFrames(l, SIZES.recordedInvoices);
    } finally {
      await l.close();
    }
  }
  return recording;
}

await section('ingest', async () => {
  const { context: c, data } = await measured('ingest', async () => {
    const rec = await frames();
    const rows = await runIngestBench(rec, SIZES.ingest);
    const profile = profileSummary(await profileIngest(rec, SIZES.ingest.profileEvents));
    return { rows, profile };
  });
  for (const r of data.rows)
    console.log(
      `ingest ${r.shape}: parse ${Math.round(r.parseMedian)}/s, pipeline ${Math.round(r.pipelineMedian)}/s (${((100 * r.pipelineMedian) / r.parseMedian).toFixed(0)}%)`,
    );
  writeSection('ingest', ingestSection(data.rows, data.profile, c));
  console.log(`wrote the ingest section of ${benchDocPath()}`);
});

await section('e2e', async () => {
  const { context: c, data: r } = await measured('e2e', () => runE2eBench(SIZES.e2e));
  writeSection('e2e', e2eSection(r, IN_FLIGHT, c));
  console.log(`wrote the e2e section of ${benchDocPath()}`);
});

await section('memory', async () => {
  const { context: c, data: r } = await measured('memory', async () =>
    runMemoryBench(await frames(), { events: SIZES.memoryEvents }),
  );
  console.log(
    `memory: ${r.events} events, RSS ${r.warmupRssMb.toFixed(1)} MB after warm-up, max ${r.maxAfterWarmupMb.toFixed(1)}, final ${r.finalMb.toFixed(1)}`,
  );
  if (r.unknownRequests.length > 0)
    console.log(`memory: the bot asked for ${r.unknownRequests.join(', ')} (answered 404)`);
  const svg = join(dirname(benchDocPath()), 'benchmarks-memory.svg');
  writeMemorySvg(
    svg,
    r,
    `ledgerbot RSS and V8 heap over ${r.events.toLocaleString('en-US')} replayed events (${r.intents.toLocaleString('en-US')} intents)`,
  );
  writeSection('memory', memorySection(r, c, basename(svg)));
  console.log(`wrote the memory section of ${benchDocPath()} and ${svg}`);
});

await section('startup', async () => {
  const { context: c, data: r } = await measured('startup', () => runStartupBench(SIZES.startup));
  console.log(
    `startup: cold ready ${r.readyMs.map((x) => Math.round(x)).join(', ')} ms; warm ready ${r.warmReadyMs.map((x) => Math.round(x)).join(', ')} ms; node -e 0 ${r.floorMs.map((x) => Math.round(x)).join(', ')} ms`,
  );
  writeSection('startup', startupSection(r, c));
  console.log(`wrote the start-up section of ${benchDocPath()}`);
});

await section('packages', () => runPackagesSection(SIZES.packages));

console.log(`bench done (${timings.join(', ')}); doc: ${benchDocPath()}`);
