import { readFileSync, writeFileSync } from 'node:fs';
import { memoryRules } from './bench-rules.js';
import { removeBotConfig, spawnBot, waitFor, writeBotConfig } from './bot-child.js';
import type { Recording } from './recorded-frames.js';
import { startReplayParticipant } from './replay-participant.js';

/**
 * Memory: the real bot (child process) against the replay participant, `events` events of the
 * recorded LEDGER_EFFECTS frames, the memory rules (one of twelve fires on ~1.5% of the events;
 * every intent is journalled, submitted and completed). Every 250 ms the child's RSS (VmRSS of
 * /proc/PID/status) and its V8 heap (prom-client's process metrics on /metrics) are sampled
 * together. Warm-up: until 10% of the events were streamed.
 */
export type MemorySample = {
  readonly seconds: number;
  readonly rssMb: number;
  readonly events: number;
  /** Absent until the ops server is up, when a scrape failed, and in results saved before heap sampling. */
  readonly heapUsedMb?: number | undefined;
  readonly heapTotalMb?: number | undefined;
  readonly externalMb?: number | undefined;
  /** Major (mark-compact) GCs the bot ran so far. */
  readonly majorGcs?: number | undefined;
};

export type MemoryResult = {
  readonly events: number;
  readonly intents: number;
  readonly seconds: number;
  readonly samples: readonly MemorySample[];
  readonly warmupSeconds: number;
  readonly warmupRssMb: number;
  readonly maxAfterWarmupMb: number;
  readonly maxMb: number;
  readonly finalMb: number;
  readonly unknownRequests: readonly string[];
};

function rssMb(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]) / 1024;
  } catch {
    return undefined;
  }
}

function metricIn(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m === null ? undefined : Number(m[1]);
}

async function metric(opsUrl: string, name: string): Promise<number | undefined> {
  return metricIn(await (await fetch(`${opsUrl}/metrics`)).text(), name);
}

const MB = 1024 * 1024;

/** The heap part of a sample from one /metrics scrape (prom-client's names, the bot's prefix). */
async function heapOf(opsUrl: string): Promise<Partial<MemorySample>> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const mb = (name: string): number | undefined => {
    const v = metricIn(text, `ledgerbot_nodejs_${name}`);
    return v === undefined ? undefined : v / MB;
  };
  return {
    heapUsedMb: mb('heap_size_used_bytes'),
    heapTotalMb: mb('heap_size_total_bytes'),
    externalMb: mb('external_memory_bytes'),
    majorGcs: metricIn(text, 'ledgerbot_nodejs_gc_duration_seconds_count{kind="major"}'),
  };
}

export async function runMemoryBench(
  rec: Recording,
  options: { readonly events: number },
): Promise<MemoryResult> {
  const completion = rec.completions.find((c) => c.includes('"Completion"'));
  if (completion === undefined) throw new Error('no completion frame was recorded');
  const participant = await startReplayParticipant({
    frames: rec.frames['ledger-effects'],
    completion,
    events: options.events,
    packages: rec.packages,
  });
  const config = writeBotConfig({
    url: participant.url,
    userId: 'bench',
    parties: rec.parties,
    rules: { 'memory.yaml': memoryRules() },
    start: 0,
    maxInFlight: 64,
    http: true,
  });
  const bot = spawnBot(config);
  const samples: MemorySample[] = [];
  const started = performance.now();
  const pid = bot.child.pid!;
  let ops: string | undefined;
  void bot.opsUrl.then((u) => (ops = u));
  let scraping = false;
  let stopped = false;
  // RSS and event count are read when the scrape answers, so the three describe one moment.
  const sample = (heap: Partial<MemorySample>): void => {
    const rss = stopped ? undefined : rssMb(pid);
    if (rss === undefined) return;
    samples.push({
      seconds: (performance.now() - started) / 1000,
      rssMb: rss,
      events: participant.eventsSent(),
      ...heap,
    });
  };
  const sampler = setInterval(() => {
    if (scraping) return;
    if (ops === undefined) return sample({});
    scraping = true;
    heapOf(ops)
      .then(sample, () => sample({}))
      .finally(() => (scraping = false));
  }, 250);
  try {
    const opsUrl = await bot.opsUrl;
    const exited = (): boolean => bot.child.exitCode !== null || bot.child.signalCode !== null;
    const streamed = await waitFor(() => participant.done() || exited(), 1_800_000, 100);
    if (exited()) throw new Error(`the bot exited (code ${bot.child.exitCode}) during the replay`);
    if (!streamed) throw new Error('the replay did not finish in 30 minutes');
    // Then until the bot processed the last frame and every intent completed.
    const last = await (async () => {
      const end = Number(
        (
          (await (await fetch(`${participant.url}/v2/state/ledger-end`)).json()) as {
            offset: number;
          }
        ).offset,
      );
      for (let i = 0; i < 1200; i++) {
        const processed = await metric(opsUrl, 'ledgerbot_processed_offset');
        const inFlight = await metric(opsUrl, 'ledgerbot_in_flight');
        if (processed === end && inFlight === 0) return true;
        await new Promise((r) => setTimeout(r, 250));
      }
      return false;
    })();
    if (!last) throw new Error('the bot did not catch up within 5 minutes of the replay end');
  } finally {
    clearInterval(sampler);
    stopped = true;
    await bot.stop();
    removeBotConfig(config);
    await participant.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const warmupEvents = options.events / 10;
  const warm = samples.find((s) => s.events >= warmupEvents) ?? samples[0]!;
  const after = samples.filter((s) => s.seconds >= warm.seconds);
  return {
    events: participant.eventsSent(),
    intents: participant.submits(),
    seconds,
    samples,
    warmupSeconds: warm.seconds,
    warmupRssMb: warm.rssMb,
    maxAfterWarmupMb: Math.max(...after.map((s) => s.rssMb)),
    maxMb: Math.max(...samples.map((s) => s.rssMb)),
    finalMb: samples[samples.length - 1]!.rssMb,
    unknownRequests: [...new Set(participant.unknown)],
  };
}

/** One quantity over the run, as the table reports it. */
export type SeriesStats = {
  readonly afterWarmupMb: number;
  readonly maxAfterWarmupMb: number;
  readonly finalMb: number;
  /** Least squares over the second half of the events; undefined with fewer than two samples. */
  readonly secondHalfSlopeMbPer100k: number | undefined;
};

/** What the heap samples say; undefined for results saved before the bench sampled the heap. */
export type HeapSummary = {
  readonly used: SeriesStats;
  readonly total: SeriesStats | undefined;
  /** RSS minus heap total and external: code, stacks, SQLite, the allocator's own pages. */
  readonly native: SeriesStats | undefined;
  readonly finalExternalMb: number | undefined;
  /**
   * Per tenth of the events (the last one also holds the catch-up after the replay): the least
   * heap used (its low-water mark: the level after a GC; the bot exposes no post-GC figure), and
   * how many major GCs ran in it. Undefined for a tenth without heap samples.
   */
  readonly tenths: readonly ({ readonly lowMb: number; readonly majorGcs: number } | undefined)[];
};

type HeapSample = MemorySample & { readonly heapUsedMb: number };

/** Least-squares slope of `value` over the events, in MB per 100,000 events. */
export function slopePer100k<T extends MemorySample>(
  samples: readonly T[],
  value: (s: T) => number,
): number | undefined {
  if (samples.length < 2) return undefined;
  const mx = samples.reduce((a, x) => a + x.events, 0) / samples.length;
  const my = samples.reduce((a, x) => a + value(x), 0) / samples.length;
  const sxx = samples.reduce((a, x) => a + (x.events - mx) ** 2, 0);
  const sxy = samples.reduce((a, x) => a + (x.events - mx) * (value(x) - my), 0);
  return sxx === 0 ? 0 : (sxy / sxx) * 100_000;
}

function seriesStats(
  r: MemoryResult,
  samples: readonly MemorySample[],
  mb: (s: MemorySample) => number | undefined,
): SeriesStats | undefined {
  const xs = samples.filter((s) => mb(s) !== undefined);
  if (xs.length === 0) return undefined;
  const v = (s: MemorySample): number => mb(s)!;
  const warm = xs.find((s) => s.seconds >= r.warmupSeconds) ?? xs[xs.length - 1]!;
  return {
    afterWarmupMb: v(warm),
    maxAfterWarmupMb: Math.max(...xs.filter((s) => s.seconds >= warm.seconds).map(v)),
    finalMb: v(xs[xs.length - 1]!),
    secondHalfSlopeMbPer100k: slopePer100k(
      xs.filter((s) => s.events >= r.events / 2),
      v,
    ),
  };
}

export function heapSummary(r: MemoryResult): HeapSummary | undefined {
  const heap = r.samples.filter((s): s is HeapSample => s.heapUsedMb !== undefined);
  const used = seriesStats(r, heap, (s) => s.heapUsedMb);
  if (used === undefined) return undefined;
  const tenthOf = (s: MemorySample): number =>
    Math.min(9, Math.floor((s.events * 10) / Math.max(1, r.events)));
  // A major GC between the last sample of a tenth and the first of the next shows in the next.
  let gcsBefore = 0;
  const tenths = Array.from({ length: 10 }, (_, i) => {
    const inTenth = heap.filter((s) => tenthOf(s) === i);
    if (inTenth.length === 0) return undefined;
    const gcs = inTenth[inTenth.length - 1]!.majorGcs ?? gcsBefore;
    const majorGcs = gcs - gcsBefore;
    gcsBefore = gcs;
    return { lowMb: Math.min(...inTenth.map((s) => s.heapUsedMb)), majorGcs };
  });
  return {
    used,
    total: seriesStats(r, heap, (s) => s.heapTotalMb),
    native: seriesStats(r, heap, (s) =>
      s.heapTotalMb === undefined || s.externalMb === undefined
        ? undefined
        : s.rssMb - s.heapTotalMb - s.externalMb,
    ),
    finalExternalMb: heap[heap.length - 1]!.externalMb,
    tenths,
  };
}

/**
 * A line plot of RSS and V8 heap used over time (hand-written SVG), with a legend and the end of
 * the warm-up marked. Heap used is a saw-tooth: its lower edge is the level after each GC.
 */
export function memorySvg(r: MemoryResult, caption: string): string {
  const W = 760;
  const H = 336;
  const left = 56;
  const right = 16;
  const top = 44;
  const bottom = 44;
  const heap = r.samples.filter((s): s is HeapSample => s.heapUsedMb !== undefined);
  const maxX = Math.max(1, ...r.samples.map((s) => s.seconds));
  const maxY =
    Math.ceil(
      (Math.max(...r.samples.map((s) => Math.max(s.rssMb, s.heapUsedMb ?? 0))) * 1.1) / 25,
    ) * 25;
  const x = (s: number): number => left + (s / maxX) * (W - left - right);
  const y = (mb: number): number => top + (1 - mb / maxY) * (H - top - bottom);
  const line = (xs: readonly MemorySample[], mb: (s: MemorySample) => number): string =>
    xs.map((s) => `${x(s.seconds).toFixed(1)},${y(mb(s)).toFixed(1)}`).join(' ');
  const yTicks = Array.from({ length: maxY / 25 + 1 }, (_, i) => i * 25).filter(
    (v, i, a) => a.length <= 9 || i % 2 === 0,
  );
  const xStep = maxX > 120 ? 30 : maxX > 40 ? 10 : 5;
  const xTicks = Array.from({ length: Math.floor(maxX / xStep) + 1 }, (_, i) => i * xStep);
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const series = [
    {
      name: 'RSS (VmRSS)',
      color: '#2563eb',
      dash: undefined as string | undefined,
      points: line(r.samples, (s) => s.rssMb),
    },
    ...(heap.length === 0
      ? []
      : [
          {
            name: 'V8 heap used (lower edge: after GC)',
            color: '#16a34a',
            dash: undefined,
            points: line(heap, (s) => s.heapUsedMb!),
          },
        ]),
    ...(heap.some((s) => s.heapTotalMb !== undefined)
      ? [
          {
            name: 'V8 heap total (reserved)',
            color: '#16a34a',
            dash: '5 3',
            points: line(
              heap.filter((s) => s.heapTotalMb !== undefined),
              (s) => s.heapTotalMb!,
            ),
          },
        ]
      : []),
  ];
  const dashOf = (d: string | undefined): string =>
    d === undefined ? '' : ` stroke-dasharray="${d}"`;
  const legend = series
    .map((l, i) => {
      const lx = left + i * 230;
      return `<line x1="${lx}" x2="${lx + 22}" y1="30" y2="30" stroke="${l.color}" stroke-width="2"${dashOf(l.dash)}/><text x="${lx + 28}" y="34">${esc(l.name)}</text>`;
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">
<rect width="${W}" height="${H}" fill="white"/>
<text x="${left}" y="16" font-size="13">${esc(caption)}</text>
${legend}
${yTicks
  .map(
    (v) =>
      `<line x1="${left}" x2="${W - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/><text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`,
  )
  .join('\n')}
${xTicks
  .map(
    (v) => `<text x="${x(v).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle">${v}</text>`,
  )
  .join('\n')}
<line x1="${left}" x2="${W - right}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>
<line x1="${left}" x2="${left}" y1="${top}" y2="${y(0)}" stroke="#333"/>
<line x1="${x(r.warmupSeconds).toFixed(1)}" x2="${x(r.warmupSeconds).toFixed(1)}" y1="${top}" y2="${y(0)}" stroke="#c44" stroke-dasharray="4 3"/>
<text x="${(x(r.warmupSeconds) + 4).toFixed(1)}" y="${top + 12}" fill="#c44">end of warm-up (10% of events)</text>
${series.map((l) => `<polyline fill="none" stroke="${l.color}" stroke-width="${l.dash === undefined ? 1.5 : 1}"${dashOf(l.dash)} points="${l.points}"/>`).join('\n')}
<text x="${(left + W - right) / 2}" y="${H - 8}" text-anchor="middle">seconds since the bot was spawned</text>
<text x="14" y="${(top + H - bottom) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(top + H - bottom) / 2})">MB</text>
</svg>
`;
}

export function writeMemorySvg(file: string, r: MemoryResult, caption: string): void {
  writeFileSync(file, memorySvg(r, caption));
}
