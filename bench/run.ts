import { loadavg } from 'node:os';
import {
  BENCH_DOC,
  benchSection,
  machineLine,
  startLoadLine,
  writeSection,
} from './bench-support.js';
import { runRulesSection } from './rules-bench.js';
import { runSandboxBench, type SandboxBenchRow } from './sandbox-bench.js';
import { runScheduleSection } from './schedule-bench.js';

/**
 * `npm run bench`: runs the benchmark sections and rewrites their part of docs/benchmarks.md.
 * Each section owns the text between its start and end markers, so sections can be added
 * without touching one another.
 */
function table(rows: readonly SandboxBenchRow[], load: number): string {
  return benchSection('sandbox', [
    '## Sandbox',
    '',
    machineLine(),
    startLoadLine(load),
    'The sandbox runs as its own process (`ledgerbot sandbox`); the load generator uses undici and `ws`.',
    'Command: CreateAndExercise of `Invoice:Invoice` with the consuming `Cancel` choice (one create, one exercise).',
    '',
    '| scenario | count | seconds | per second |',
    '|---|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.count} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} |`,
    ),
  ]);
}

const maxMs = Number(process.env.BENCH_SECONDS ?? '8') * 1000;
const load = loadavg()[0] ?? 0;
const rows = await runSandboxBench({ maxMs, maxCount: 50_000 });
for (const r of rows)
  console.log(
    `${r.scenario}: ${Math.round(r.perSecond)}/s (${r.count} in ${r.seconds.toFixed(2)} s)`,
  );
writeSection('sandbox', table(rows, load));
console.log(`wrote ${BENCH_DOC}`);

// The rules section writes its own part of docs/benchmarks.md (bench/rules-bench.ts).
await runRulesSection();
await runScheduleSection();
