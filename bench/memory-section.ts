import { benchSection } from './bench-support.js';
import {
  heapSummary,
  slopePer100k,
  type HeapSummary,
  type MemoryResult,
  type SeriesStats,
} from './memory-bench.js';
import { header, int, verdict, type SectionContext } from './section-text.js';

/** The docs/benchmarks.md text of the memory section. */
export function memorySection(r: MemoryResult, c: SectionContext, svgName: string): string {
  const growth = r.maxAfterWarmupMb - r.warmupRssMb;
  const heap = heapSummary(r);
  const reading = heap === undefined ? 'unknown' : heapReading(heap).kind;
  const half = r.samples.filter((x) => x.events >= r.events / 2);
  const slope = (x: number | undefined): string => (x === undefined ? '–' : x.toFixed(2));
  const row = (name: string, x: SeriesStats): string =>
    `| ${name} | ${x.afterWarmupMb.toFixed(1)} | ${x.maxAfterWarmupMb.toFixed(1)} | ${x.finalMb.toFixed(1)} | ${(x.maxAfterWarmupMb - x.afterWarmupMb).toFixed(1)} | ${slope(x.secondHalfSlopeMbPer100k)} |`;
  return benchSection('memory', [
    ...header('Memory', c, 'memory', '`bench/memory-bench.ts`, `bench/replay-participant.ts`'),
    '',
    `The bot (\`node bin/ledgerbot.js run\`, child process, /metrics on) against a bench-only replay participant on`,
    '127.0.0.1 (in the bench process): /v2/updates streams the recorded LEDGER_EFFECTS frames of the ingest section with',
    'increasing offsets and per-cycle update ids (paced by websocket backpressure), async submits answer 200 and send a',
    'success completion on /v2/commands/completions (frames copied from the sandbox). Rules: `memoryRules()` in',
    '`bench/bench-rules.ts`, twelve rules, one firing (every intent journalled, submitted, completed). Every 250 ms:',
    "RSS = VmRSS of the child, and its V8 heap from the bot's /metrics (prom-client's `nodejs_heap_size_used_bytes`,",
    '`…_total_bytes`, `nodejs_external_memory_bytes`, major GC count), read together (the scrape itself allocates a',
    'little in the bot). Warm-up = until 10% of the events were streamed. Slope: least squares over the second half of',
    'the events (heap used is a saw-tooth between major GCs, so its growth and slope depend on where the run ends in',
    'a cycle; the low-water marks below are the leak measure).',
    '',
    `${int(r.events)} events, ${int(r.intents)} intents, ${r.seconds.toFixed(1)} s.`,
    '',
    '| | after warm-up MB | max after warm-up MB | final MB | growth after warm-up MB | slope, second half, MB / 100k events |',
    '|---|---:|---:|---:|---:|---:|',
    `| RSS | ${r.warmupRssMb.toFixed(1)} | ${r.maxAfterWarmupMb.toFixed(1)} | ${r.finalMb.toFixed(1)} | ${growth.toFixed(1)} | ${slope(slopePer100k(half, (x) => x.rssMb))} |`,
    ...(heap === undefined ? [] : [row('V8 heap used', heap.used)]),
    ...(heap?.total === undefined ? [] : [row('V8 heap total (reserved)', heap.total)]),
    ...(heap?.native === undefined
      ? []
      : [row('RSS − heap total − external (native)', heap.native)]),
    '',
    `Target: < 30 MB RSS growth after warm-up (max after warm-up minus the RSS at the end of the warm-up): ${verdict(growth < 30)} (${growth.toFixed(1)} MB).`,
    secondHalfLine(r),
    ...(heap === undefined
      ? ['', 'The heap was not sampled in this run.']
      : ['', ...heapLines(r, heap)]),
    '',
    ...MEMORY_SETTING,
    ...(growth < 30 ? [] : ['', ...MEMORY_MISSED[reading]]),
    '',
    `![RSS and V8 heap used of the bot over the replay](${svgName})`,
  ]);
}

/** Is RSS still growing? Its band and slope over the second half of the events. */
function secondHalfLine(r: MemoryResult): string {
  const half = r.samples.filter((x) => x.events >= r.events / 2);
  const slope = slopePer100k(half, (x) => x.rssMb);
  if (slope === undefined) return 'Too few samples in the second half of the events for a slope.';
  const fifth = r.samples.find((x) => x.events >= r.events / 5);
  return [
    `Second half of the events: RSS ${Math.min(...half.map((x) => x.rssMb)).toFixed(1)}–${Math.max(...half.map((x) => x.rssMb)).toFixed(1)} MB,`,
    `slope ${slope.toFixed(2)} MB per 100,000 events`,
    fifth === undefined
      ? '.'
      : `; from 20% of the events to the end: ${fifth.rssMb.toFixed(1)} → ${r.finalMb.toFixed(1)} MB.`,
  ]
    .join(' ')
    .replace(' ;', ';')
    .replace(' .', '.');
}

/*
 * The heap's level after GC from 20% of the events (past the warm-up) to the end, read from the
 * low-water marks of the tenths in which a major GC ran: in a tenth without one, the lowest
 * sample still holds old-space garbage, so its level says nothing about what is alive. "flat"
 * if the last such mark is less than 5 MB or 5% above the first (where in a scavenge cycle the
 * lowest sample fell), else "rising".
 */
function heapReading(h: HeapSummary): {
  kind: 'flat' | 'rising' | 'unknown';
  from?: { tenth: number; mb: number };
  to?: { tenth: number; mb: number };
} {
  const marks = h.tenths.flatMap((t, i) =>
    i >= 1 && t !== undefined && t.majorGcs > 0 ? [{ tenth: i, mb: t.lowMb }] : [],
  );
  if (marks.length < 2) return { kind: 'unknown' };
  const from = marks[0]!;
  const to = marks[marks.length - 1]!;
  return {
    kind: to.mb - from.mb < Math.max(5, from.mb * 0.05) ? 'flat' : 'rising',
    from,
    to,
  };
}

function heapLines(r: MemoryResult, h: HeapSummary): string[] {
  const read = heapReading(h);
  const at = (m: { tenth: number; mb: number }): string =>
    `${m.mb.toFixed(1)} MB (${(m.tenth + 1) * 10}%)`;
  const tenths = h.tenths
    .map((t, i) =>
      t === undefined
        ? `${(i + 1) * 10}%: –`
        : `${(i + 1) * 10}%: ${t.lowMb.toFixed(1)}${t.majorGcs > 0 ? ` (${t.majorGcs})` : ''}`,
    )
    .join(', ');
  const verdictLine =
    read.kind === 'unknown'
      ? 'Fewer than two tenths after the first had a major GC: no low-water reading of the heap after GC.'
      : read.kind === 'flat'
        ? `Heap after a major GC, from the first tenth after the warm-up with one to the last: ${at(read.from!)} → ${at(read.to!)}: **flat, no sign of a leak**.`
        : `Heap after a major GC, from the first tenth after the warm-up with one to the last: ${at(read.from!)} → ${at(read.to!)}: **rising**, about ${(((read.to!.mb - read.from!.mb) * 1024 * 10) / Math.max(1, r.intents * (read.to!.tenth - read.from!.tenth))).toFixed(2)} KB per intent.`;
  return [
    'V8 heap used, low-water mark per tenth of the events (its lowest sample; the bot exposes no post-GC figure),',
    `MB, with the number of major GCs in the tenths that had one: ${tenths}. Only a tenth with a major GC`,
    'shows the live heap; in the others old-space garbage is still counted.',
    verdictLine,
  ];
}

/** Why the bot sets a V8 flag (src/cli/compose/heap-growth.ts, once it runs); printed always. */
const MEMORY_SETTING: readonly string[] = [
  "`ledgerbot run` sets V8's heap growing factor to 1.5 once the bot runs (`--heap-growing-percent=50`; docs/operations.md, Bare",
  "node). V8's own factor rises to 4 for a process that allocates as fast as the bot (every event parsed and",
  'evaluated, nearly all of it garbage at once): without the setting the old space grew to 100–140 MB between the',
  'few major GCs of a run, over a live heap of about 30 MB, and RSS grew 50–96 MB in this section (scratch runs',
  'on 2026-11-26 at load 5–7: 63 and 96 MB without it, 15 and 12 MB with it, 22 MB at 100%). The price is more',
  'major GCs of that small heap: in the e2e section their time went from 20–50 ms to 55–70 ms per 8,000 intents,',
  'against 350–640 ms of scavenges; the CPU time of the bot did not move measurably.',
];
const MEMORY_MISSED: Readonly<Record<'flat' | 'rising' | 'unknown', readonly string[]>> = {
  flat: [
    'Reading: the RSS growth is not a leak: the live heap (after a major GC) does not grow with events or intents.',
    'What grows is what V8 reserves (heap total: it sizes the old space to the allocation rate and keeps it; heap',
    'used climbs towards it between major GCs) and native memory (SQLite, the allocator keeping freed pages):',
    'compare the rows of the table. The target measures RSS, which V8 and the allocator decide. What would bound it',
    'further: a smaller heap growing factor (`node --heap-growing-percent=25 bin/ledgerbot.js run`) or a cap on the',
    'old space (`--max-old-space-size=…`), at the cost of more major GCs; the journal is bounded by the running bot',
    'compacting finished intents (`state.retention`).',
  ],
  rising: [
    'Reading: the heap after GC rises with the events, so objects are kept per event or intent, on top of V8',
    'growing its old space. What would tell what: heap snapshots of the bot (`node --heapsnapshot-signal=SIGUSR2`)',
    'at 20% of the events and at the end, compared by retained size.',
  ],
  unknown: [
    'Reading: this run does not show whether the live heap grows (no heap samples, or fewer than two tenths after',
    'the warm-up with a major GC: a longer run has more). What grows besides it: compare the heap total and native',
    'rows with RSS; heap snapshots of the bot (`node --heapsnapshot-signal=SIGUSR2`) at 20% of the events and at the',
    'end would show what is kept.',
  ],
};
