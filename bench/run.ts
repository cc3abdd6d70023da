import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runRulesSection } from './rules-bench.js';
import { runSandboxBench, type SandboxBenchRow } from './sandbox-bench.js';
import { runScheduleSection } from './schedule-bench.js';

/**
 * `npm run bench`: runs the benchmark sections and rewrites their part of docs/benchmarks.md.
 * Each section owns the text between its start and end markers, so sections can be added
 * without touching one another.
 */
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const START = '<!-- bench:sandbox:start -->';
const END = '<!-- bench:sandbox:end -->';

function table(rows: readonly SandboxBenchRow[], load: number): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return [
    START,
    '## Sandbox',
    '',
    `Machine: ${cpus().length} × ${cpu}; Node ${process.version}; ${new Date().toISOString().slice(0, 10)};`,
    `load average ${load.toFixed(2)} when the run started (other work on the machine lowers the numbers).`,
    'The sandbox runs as its own process (`ledgerbot sandbox`); the load generator uses undici and `ws`.',
    'Command: CreateAndExercise of `Invoice:Invoice` with the consuming `Cancel` choice (one create, one exercise).',
    '',
    '| scenario | count | seconds | per second |',
    '|---|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.count} | ${r.seconds.toFixed(2)} | ${Math.round(r.perSecond)} |`,
    ),
    END,
  ].join('\n');
}

function writeSection(section: string): void {
  let doc = existsSync(DOC)
    ? readFileSync(DOC, 'utf8')
    : '# Benchmarks\n\nProduced by `npm run bench`.\n';
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a >= 0 && b > a) doc = doc.slice(0, a) + section + doc.slice(b + END.length);
  else doc = `${doc.trimEnd()}\n\n${section}\n`;
  writeFileSync(DOC, doc.endsWith('\n') ? doc : `${doc}\n`);
}

const maxMs = Number(process.env.BENCH_SECONDS ?? '8') * 1000;
const load = loadavg()[0] ?? 0;
const rows = await runSandboxBench({ maxMs, maxCount: 50_000 });
for (const r of rows)
  console.log(
    `${r.scenario}: ${Math.round(r.perSecond)}/s (${r.count} in ${r.seconds.toFixed(2)} s)`,
  );
writeSection(table(rows, load));
console.log(`wrote ${DOC}`);

// The rules section writes its own part of docs/benchmarks.md (bench/rules-bench.ts).
await runRulesSection();
await runScheduleSection();
