import { readFileSync, writeFileSync } from 'node:fs';
import { memoryRules } from './bench-rules.js';
import { spawnBot, waitFor, writeBotConfig } from './bot-child.js';
import type { Recording } from './recorded-frames.js';
import { startReplayParticipant } from './replay-participant.js';

/**
 * Memory: the real bot (child process) against the replay participant, `events` events of the
 * recorded LEDGER_EFFECTS frames, the memory rules (one of twelve fires on ~1.5% of the events;
 * every intent is journalled, submitted and completed). The child's RSS (VmRSS of
 * /proc/PID/status) is sampled every 250 ms. Warm-up: until 10% of the events were streamed.
 */
export type MemorySample = {
  readonly seconds: number;
  readonly rssMb: number;
  readonly events: number;
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

async function metric(opsUrl: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m === null ? undefined : Number(m[1]);
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
  const sampler = setInterval(() => {
    const rss = rssMb(pid);
    if (rss !== undefined) {
      samples.push({
        seconds: (performance.now() - started) / 1000,
        rssMb: rss,
        events: participant.eventsSent(),
      });
    }
  }, 250);
  try {
    const opsUrl = await bot.opsUrl;
    const streamed = await waitFor(() => participant.done(), 1_800_000, 100);
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
    await bot.stop();
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

/** A line plot of RSS over time (hand-written SVG), with the end of the warm-up marked. */
export function memorySvg(r: MemoryResult, caption: string): string {
  const W = 760;
  const H = 320;
  const left = 56;
  const right = 16;
  const top = 28;
  const bottom = 44;
  const maxX = Math.max(1, ...r.samples.map((s) => s.seconds));
  const maxY = Math.ceil((Math.max(...r.samples.map((s) => s.rssMb)) * 1.1) / 25) * 25;
  const x = (s: number): number => left + (s / maxX) * (W - left - right);
  const y = (mb: number): number => top + (1 - mb / maxY) * (H - top - bottom);
  const points = r.samples.map((s) => `${x(s.seconds).toFixed(1)},${y(s.rssMb).toFixed(1)}`);
  const yTicks = Array.from({ length: maxY / 25 + 1 }, (_, i) => i * 25).filter(
    (v, i, a) => a.length <= 9 || i % 2 === 0,
  );
  const xStep = maxX > 120 ? 30 : maxX > 40 ? 10 : 5;
  const xTicks = Array.from({ length: Math.floor(maxX / xStep) + 1 }, (_, i) => i * xStep);
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">
<rect width="${W}" height="${H}" fill="white"/>
<text x="${left}" y="16" font-size="13">${esc(caption)}</text>
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
<polyline fill="none" stroke="#2563eb" stroke-width="1.5" points="${points.join(' ')}"/>
<text x="${(left + W - right) / 2}" y="${H - 8}" text-anchor="middle">seconds since the bot was spawned</text>
<text x="14" y="${(top + H - bottom) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(top + H - bottom) / 2})">RSS (MB)</text>
</svg>
`;
}

export function writeMemorySvg(file: string, r: MemoryResult, caption: string): void {
  writeFileSync(file, memorySvg(r, caption));
}
