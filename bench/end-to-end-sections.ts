import { benchSection, commandLine, machineLine, startLoadLine } from './bench-support.js';
import { formatSelfTime, type ProfileSummary, type SelfTime } from './cpu-profile-summary.js';
import type { E2eResult, Latency } from './e2e-bench.js';
import type { IngestRow, IngestStep } from './ingest-bench.js';
import {
  heapSummary,
  slopePer100k,
  type HeapSummary,
  type MemoryResult,
  type SeriesStats,
} from './memory-bench.js';
import type { StartupResult } from './startup-bench.js';

/** The docs/benchmarks.md text of the ingest, e2e, memory and start-up sections. */
export type SectionContext = {
  /** The load average when the section started. */
  readonly load: number;
};

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1
    ? s[(s.length - 1) / 2]!
    : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const verdict = (met: boolean): string => (met ? 'met' : '**NOT met**');

function header(title: string, c: SectionContext, only: string, source: string): string[] {
  return [`## ${title}`, '', machineLine(), startLoadLine(c.load), commandLine(only, source)];
}

function profileBlock(
  title: string,
  areas: readonly SelfTime[],
  top: readonly SelfTime[],
): string[] {
  return [
    '',
    `<details><summary>${title}</summary>`,
    '',
    '```',
    'self time by area',
    ...formatSelfTime(areas),
    '',
    'top functions by self time',
    ...formatSelfTime(top),
    '```',
    '',
    '</details>',
  ];
}

/** What a profile says in one line: the largest areas (with idle time) and the hottest functions. */
export function whereTimeGoes(areas: readonly SelfTime[], top: readonly SelfTime[]): string {
  const share = (x: SelfTime): string => `${x.name} ${x.percent.toFixed(0)}%`;
  const busy = areas.filter((x) => x.name !== '(idle)' && x.name !== '(program)').slice(0, 5);
  const idle = areas.find((x) => x.name === '(idle)');
  const hot = top.filter((x) => !x.name.startsWith('(')).slice(0, 5);
  return [
    `Where the time goes (self time in the profile below): ${busy.map(share).join(', ')}`,
    idle === undefined ? '' : `; idle ${idle.percent.toFixed(0)}%`,
    `. Hottest functions: ${hot.map((x) => `\`${x.name}\` ${x.percent.toFixed(1)}%`).join(', ')}.`,
  ].join('');
}

export function ingestSection(
  rows: readonly IngestRow[],
  profile: ProfileSummary,
  c: SectionContext,
): string {
  const main = rows[0]!;
  const ratio = (r: IngestRow): number => r.pipelineMedian / r.parseMedian;
  const worst = Math.min(...rows.map(ratio));
  return benchSection('ingest', [
    ...header(
      'Ingest vs the limit',
      c,
      'ingest',
      '`bench/ingest-bench.ts`, rules in `bench/bench-rules.ts`',
    ),
    '',
    `Frames: ${rows.map((r) => `${int(r.distinctFrames)} (${r.shape})`).join(' and ')} distinct JsGetUpdatesResponse frames recorded`,
    'from the sandbox as its websocket sends them (invoices model: invoices created, two in six then accepted through the',
    'InvoiceAcceptor with half of those payments settled, one in six reminded, one in six cancelled), read with the filter',
    '`planSubscription` derives from the 100 rules; cycled with increasing offsets and per-cycle update ids to the event',
    `counts below (${int(main.bytesPerFrame)} bytes per frame on average). One thread; the frame text is rendered outside the clock.`,
    '',
    'Parse only: `JSON.parse` of each frame. Pipeline, the code the bot runs per frame: `JSON.parse`, the Canton-error',
    "check, `decodeUpdate`, the bot's `evaluateUpdate` (100 rules through their `RuleIndex`, the match counters)",
    'and `journalEntriesOf` (commandId, payload, trigger) per intent; not the SQLite journal write or the submission (see the',
    'end-to-end section). The 100 rules mix created, exercised and archived triggers over the Invoice, Payment and',
    'Receipt templates with CEL conditions (decimal windows, dates, references); `acs-delta` swaps the exercised rules',
    'for created ones, so the bot subscribes with ACS_DELTA. Rounds alternate the two sides.',
    '',
    '| shape | events | rules matched / event | events firing | intents | parse only events/s (best / median) | pipeline events/s (best / median) | pipeline / parse (median) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.shape} | ${int(r.events)} | ${r.rulesMatchedPerEvent.toFixed(1)} | ${pct(r.firingFraction)} | ${int(r.intents)} | ${int(r.parseBest)} / ${int(r.parseMedian)} | ${int(r.pipelineBest)} / ${int(r.pipelineMedian)} | ${pct(ratio(r))} |`,
    ),
    '',
    `Target: pipeline ≥ 50% of the parse-only rate: ${verdict(worst >= 0.5)} (${rows.map((r) => `${r.shape} ${pct(ratio(r))}`).join(', ')}).`,
    ...ingestSteps(rows),
    ...(worst >= 0.5 ? [] : ['', whereTimeGoes(profile.areas, profile.top), ...INGEST_MISSED]),
    ...profileBlock(
      'Profile of the pipeline (node:inspector, LEDGER_EFFECTS, after the measured rounds)',
      profile.areas,
      profile.top,
    ),
  ]);
}

const STEP_NAMES: Readonly<Record<IngestStep, string>> = {
  baseline: 'none (every rule evaluated as written)',
  fold: 'fold literals only',
  memo: 'conversion memo only',
  index: 'rule guards only',
  all: 'all three (what the bot runs)',
};

/** The steps table: each evaluation step of issue 16 alone, measured in the same rounds. */
function ingestSteps(rows: readonly IngestRow[]): string[] {
  const withSteps = rows.find((r) => r.steps !== undefined);
  const steps = withSteps?.steps;
  if (withSteps === undefined || steps === undefined) return [];
  const base = steps.find((s) => s.step === 'baseline')!.pipelineMedian;
  return [
    '',
    `Each step alone, ${withSteps.shape}, ${int(steps[0]!.events)} events per variant: in every round, parse only and the five`,
    'variants run in turn (the order rotates), so the rows compare within one run. Fold: `decimal("…")`, `date("…")`,',
    '`timestamp("…")` and `duration("…")` literals become values when the rules compile. Memo: `decimal(x)`/`date(x)` of',
    "text convert once per event, shared by the event's rules. Guards: a rule whose first condition has an equality",
    '(`event.… == "USD"`, `in [...]`, `== parties.payer`, `date(…) == date("…")`) or a text test (`startsWith`,',
    "`endsWith`, `contains`) that the event's text fails is not evaluated. The variants must agree on every intent and",
    'match (the bench checks it).',
    'Under every row, also "none": the lookups and comparisons made cheaper per event (see the reading below).',
    '',
    '| steps on | pipeline events/s (best / median) | pipeline / parse (median) | vs none |',
    '|---|---:|---:|---:|',
    ...steps.map(
      (s) =>
        `| ${STEP_NAMES[s.step]} | ${int(s.pipelineBest)} / ${int(s.pipelineMedian)} | ${pct(s.pipelineMedian / s.parseMedian)} | ${(s.pipelineMedian / base).toFixed(2)}× |`,
    ),
  ];
}

const ms = (l: Latency): string => `${int(l.p50)} | ${int(l.p99)} | ${int(l.max)}`;

export function e2eSection(r: E2eResult, inFlight: number, c: SectionContext): string {
  const n = r.runs[0]?.n ?? 0;
  const rate = (x: { n: number; submitSeconds: number }): number => x.n / x.submitSeconds;
  const bot = r.runs.filter((x) => x.client === 'bot');
  const raw = r.runs.filter((x) => x.client === 'raw');
  const botRate = median(bot.map(rate));
  const rawRate = median(raw.map(rate));
  const botWall = median(bot.map((x) => x.n / x.wallSeconds));
  const rawWall = median(raw.map((x) => x.n / x.wallSeconds));
  const ratio = botRate / rawRate;
  const rawLatency = r.latency.raw;
  return benchSection('e2e', [
    ...header('End to end vs raw capacity', c, 'e2e', '`bench/e2e-bench.ts`'),
    '',
    `Each run: a fresh sandbox process (invoices model, no faults), N = ${int(n)} invoices created first (64 at a time), then`,
    `one client cancels each of them (one ExerciseCommand per invoice, async submit, completion awaited, at most ${inFlight} in flight):`,
    `- **bot**: \`node bin/ledgerbot.js run\` (child process, SQLite journal, info logs) with one rule (created Invoice → exercise`,
    `  Cancel, concurrency ${inFlight}, no rate limit) and \`start:\` the offset before the invoices; done at the N-th \`intent finished\` log line;`,
    '- **raw**: a hand-written client (undici + ws, in the bench process): the same update stream and filter, the same',
    '  exercise per created contract, no rules, no journal; done at the N-th completion.',
    '',
    'Rates: N / (first submission → last completion); "start → done": N / (bot spawned or raw streams opened → last',
    "completion), which adds the bot's start-up. Bot times come from its log lines (`time`, milliseconds). Runs alternate.",
    '',
    '| client | round | N | start → done s | first submit → last completion s | commands/s |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.runs.map(
      (x) =>
        `| ${x.client} | ${x.round + 1} | ${int(x.n)} | ${x.wallSeconds.toFixed(2)} | ${x.submitSeconds.toFixed(2)} | ${int(rate(x))} |`,
    ),
    '',
    `Median commands/s: bot ${int(botRate)}, raw ${int(rawRate)}: **bot at ${pct(ratio)} of raw** (start → done: ${pct(botWall / rawWall)}).`,
    `Target: bot ≥ 80% of the raw client's throughput: ${verdict(ratio >= 0.8)}.`,
    '',
    `Latency, bot running live (after its backlog in round 1): ${int(r.latency.count)} invoices created one by one at`,
    `${int(r.latency.ratePerSecond)}/s. Event time = the triggering transaction's \`recordTime\` (update stream); completion =`,
    "the `time` of the bot's `intent finished` log line, submit = that minus the line's `recordToCompletionMs` plus its",
    '`recordToSubmitMs` (first attempt). Milliseconds (log times have millisecond resolution).',
    ...(rawLatency === undefined
      ? []
      : [
          `The raw client, the same way after its backlog in round 1 (${int(rawLatency.count)} invoices; its clock at the submit`,
          'call and at the completion frame): what the sandbox and the machine give a client that keeps no books.',
        ]),
    '',
    '| | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|',
    `| bot: event → submit | ${ms(r.latency.toSubmit)} |`,
    `| bot: event → completion | ${ms(r.latency.toCompletion)} |`,
    ...(rawLatency === undefined
      ? []
      : [
          `| raw: event → submit | ${ms(rawLatency.toSubmit)} |`,
          `| raw: event → completion | ${ms(rawLatency.toCompletion)} |`,
        ]),
    '',
    `Target: event → completion p99 ≤ 30 ms, live at ${int(r.latency.ratePerSecond)} events/s: ${verdict(r.latency.toCompletion.p99 <= 30)} (${int(r.latency.toCompletion.p99)} ms).`,
    ...(r.latency.toCompletion.p99 <= 30 ? [] : ['', ...LATENCY_MISSED]),
    ...(ratio >= 0.8
      ? []
      : [
          '',
          ...(r.profile === undefined
            ? ['No profile in this run (the full run profiles the bot).']
            : [whereTimeGoes(r.profile.areas, r.profile.top)]),
          ...E2E_MISSED,
        ]),
    ...(r.profile === undefined
      ? []
      : profileBlock(
          `Profile of the bot child (\`node --cpu-prof\`, one more untimed run of N = ${int(r.profileN ?? 0)})`,
          r.profile.areas,
          r.profile.top,
        )),
  ]);
}

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

export function startupSection(r: StartupResult, c: SectionContext): string {
  const ready = median(r.readyMs);
  const warm = median(r.warmReadyMs);
  const floor = median(r.floorMs);
  const met = ready < 1200 && warm < 500;
  return benchSection('startup', [
    ...header('Start-up', c, 'startup', '`bench/startup-bench.ts`'),
    '',
    `From spawning \`node bin/ledgerbot.js run --config …\` with ${int(r.rules)} rules (ten generated files of 100 bench`,
    'rules) against the sandbox (own process, empty ledger, `start: ledger-end`) until GET /readyz answers 200 (bot',
    'running, updates stream connected, within `readyMaxLag` of the ledger end), polled every 5 ms once the ops server',
    'logged its address. Cold: a fresh state directory per run (no rule cache, no package cache). Warm: one state',
    'directory, filled by an untimed first start, reused by every warm run (its `rule-cache.json` and package cache',
    'are hit). "bot starting": the bot\'s log line after the rules are loaded and the store is open. CPU time: user +',
    'system time of the bot process when /readyz answered (from /proc, 10 ms ticks), which other work on the machine',
    'disturbs less than the wall time the targets are stated in. Floor: spawning `node -e 0` until it exits. Each run',
    'is a floor, a cold start and a warm start, in turn.',
    '',
    '| | median ms | runs ms |',
    '|---|---:|---|',
    `| cold: spawn → /readyz 200 | ${int(ready)} | ${r.readyMs.map(int).join(', ')} |`,
    `| cold: spawn → "bot starting" | ${int(median(r.startingMs))} | ${r.startingMs.map(int).join(', ')} |`,
    `| warm: spawn → /readyz 200 | ${int(warm)} | ${r.warmReadyMs.map(int).join(', ')} |`,
    `| warm: spawn → "bot starting" | ${int(median(r.warmStartingMs))} | ${r.warmStartingMs.map(int).join(', ')} |`,
    ...(r.cpuMs.length === 0
      ? []
      : [
          `| cold: CPU time of the bot until ready | ${int(median(r.cpuMs))} | ${r.cpuMs.map(int).join(', ')} |`,
          `| warm: CPU time of the bot until ready | ${int(median(r.warmCpuMs))} | ${r.warmCpuMs.map(int).join(', ')} |`,
        ]),
    `| \`node -e 0\` (floor) | ${int(floor)} | ${r.floorMs.map(int).join(', ')} |`,
    '',
    `Target: warm ready in < 500 ms: ${verdict(warm < 500)} (median ${int(warm)} ms, ${(warm / floor).toFixed(1)}× the node floor).`,
    `Target: cold ready in < 1,200 ms: ${verdict(ready < 1200)} (median ${int(ready)} ms, ${(ready / floor).toFixed(1)}× the node floor).`,
    ...(met
      ? []
      : [
          '',
          ...(r.warmProfile === undefined
            ? [
                'No profile in this run (the full run profiles one more cold and one more warm start).',
              ]
            : [`Warm start: ${whereTimeGoes(r.warmProfile.areas, r.warmProfile.top)}`]),
          ...(r.profile === undefined
            ? []
            : [`Cold start: ${whereTimeGoes(r.profile.areas, r.profile.top)}`]),
          ...STARTUP_MISSED,
        ]),
    ...(r.warmProfile === undefined
      ? []
      : profileBlock(
          'Profile of one more warm start (`node --cpu-prof`, untimed, until /readyz answered 200)',
          r.warmProfile.areas,
          r.warmProfile.top,
        )),
    ...(r.profile === undefined
      ? []
      : profileBlock(
          'Profile of one more cold start (`node --cpu-prof`, untimed, until /readyz answered 200)',
          r.profile.areas,
          r.profile.top,
        )),
  ]);
}

/*
 * What a missed target's note says after the line `whereTimeGoes` computes from this run's profile:
 * a reading of the full run's profiles and what would fix it, written by hand, so it names code,
 * not numbers that a rerun changes. Printed only while the target is missed.
 */
const INGEST_MISSED: readonly string[] = [
  'Reading: parse only is one `JSON.parse` per frame; the pipeline also runs, per event, every rule whose trigger',
  'matches it ("rules matched / event": the 100 bench rules watch the same three templates, so about a quarter of them',
  'match each event) and builds the intents of the events that fire ("events firing"; `fireRule`: rendering and a',
  'sha256 commandId each). Tried (issue 16), each step measured alone in the table above: `decimal("…")`, `date("…")`,',
  '`timestamp("…")` literals folded when the rules compile (they were parsed at every evaluation); `decimal(x)` and',
  "`date(x)` of an event field converted once per event, in a memo the event's rules share; and rules skipped without",
  'CEL when their first condition has an equality or a text test on an event field (`currency == "USD"`, `in [...]`,',
  '`payer == parties.payer`, `reference.startsWith("INV-")`) that the event\'s text fails. Under every row: the',
  'candidate rules and field reads of an event looked up by its template id, and template ids compared in place.',
  'What is left is per matched rule, not per event: the trigger and party checks, one explanation per rule (the bot',
  'counts matches and condition failures per rule from them), cel-js interpreting the conditions no guard decides',
  '(field access, `matches`, `exists`, decimal arithmetic) and the intents. At about 150,000 frames parsed per second',
  'and some 25 matched rules per event, 50% leaves about half a microsecond per matched rule: that needs rules',
  'grouped so that one check skips many (by currency, say, with counters kept per group instead of an explanation',
  'per rule) and conditions compiled to JavaScript instead of interpreted, neither done here. (`JSON.parse` is a V8',
  "builtin: its time is most likely counted in its caller's self time, here the bench's `pipeline` function.)",
];
const LATENCY_MISSED: readonly string[] = [
  "Reading (latency): the p50 is a few milliseconds, like the raw client's; the p99 is made by stalls of the",
  "bot's event loop, which delay every event queued behind them, on top of what the machine gives (the raw rows).",
  'A scratch run with the stalls logged (2026-11-26, load 5, a loop timer and `PerformanceObserver` in the bot)',
  'showed, during the 10 s of paced events: journal COMMITs of 4–13 ms (29 of them: better-sqlite3 runs the WAL',
  'append, and now and then the checkpoint that copies the WAL back with fsync, on the event loop), garbage',
  'collection (one 30 ms scavenge right after the backlog, when the young generation was at its largest), and',
  "the CPU of the machine shared with the sandbox. The bot's own hops were cut: the first attempt starts in the",
  'turn that records the intent (one commit before the submission, no timer turn), and the journal writes one small',
  'log row per changed intent (issue 16). What would cut the stalls further: WAL checkpoints off the event loop.',
  "On a machine this busy the bot's scavenges are the longest stalls (one of 190 ms): V8 runs them on helper",
  'threads that wait for a core. A scratch A/B of the paced phase alone (2026-11-26, load 7–8, the bot after a',
  '3,000-intent backlog, four runs each) gave p99 30, 43, 43 and 75 ms with `node --single-threaded-gc` against',
  '48, 105, 157 and 516 ms without (`--no-parallel-scavenge` alone: 122 and 145), and less scavenge time in all',
  '(190–280 ms against 320–520). The bot does not set it: it turns off every GC helper thread (concurrent marking',
  'too), which an idle multi-core host gains from, and setting it after V8 started was not tried; a CPU-limited',
  'deployment can pass it to node (`node --single-threaded-gc bin/ledgerbot.js run …`).',
];
const E2E_MISSED: readonly string[] = [
  'Reading: the bot is CPU-bound (little idle time in its profile) on two cores it shares with the sandbox, and',
  'the raw client keeps no books. The largest share of its time is still the intent journal (`ledgerbot store/` and',
  '`better-sqlite3`: one `intent_log` row per intent changed in a write group, the folds of that log into `intents`,',
  'the BEGIN/COMMIT of each group), then the HTTP submissions (undici, `writev`: the raw client pays the same), garbage',
  'collection (mostly scavenges) and the update stream (`ledger/`). The runtime itself (`ledgerbot runtime/`:',
  'ingest, admission, the submission tracker, metrics) is a few percent.',
  'Already tried: the journal commits once per event-loop turn (group commit), the log lines of a turn go out in one',
  'write, and secrets are redacted in one pass instead of by pino paths (those were ~7% of the profile). At `info`',
  'the bot now writes one `intent finished` line per intent instead of three state-change lines (those moved to',
  '`debug`): stdout on a pipe is written synchronously, so lines cost CPU and block the bot while the reader lags',
  "(`writeUtf8String`). An intent's first attempt starts in the event-loop turn that records it, so its recording",
  'and its `submitted` change commit together. An attempt no longer copies the commands it sends.',
  'The journal is an append-only log of intent state changes (issue 16): open intents live in memory, a transition',
  'reads no row and parses no JSON, an intent recorded and first submitted in one turn is one small insert and its',
  'completion one more, and the log is folded into `intents` every 2,000 rows (about one upsert per intent). Its',
  'share of the profile went from about 38% (2026-11-23) to about 23% (`ledgerbot store/` plus `better-sqlite3`,',
  '2026-11-26 at load 6), most of it now the COMMIT of each write group (`sqliteTransaction`) and the folds.',
];
/** Why the bot sets a V8 flag (bin/ledgerbot.js, src/cli/compose/heap-growth.ts); printed always. */
const MEMORY_SETTING: readonly string[] = [
  "`ledgerbot run` sets V8's heap growing factor to 1.5 (`--heap-growing-percent=50`; docs/operations.md, Bare",
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
const STARTUP_MISSED: readonly string[] = [
  'Reading: a warm start takes unchanged rule files from `state.dir/rule-cache.json` (their checked value and the',
  'positions of their YAML nodes), so it neither parses YAML nor runs the schema; the schema validators are generated',
  'at build time (ajv standalone code, no `ajv.compile` at start), and `run` loads only its own modules (about 360 ES',
  'modules, 530 before: the other commands, the sandbox, its model loader and pino-pretty load when used). Against a',
  "participant the rules are loaded twice: against the config's packages before the participant is reached (a rule",
  "mistake exits 2 before anything starts), then with the participant's packages (`src/cli/compose/start-bot.ts`);",
  'the second load takes the checked files, their restored YAML positions and the CEL programs of the first and',
  "only compiles the rules again against the participant's types (each read path walked once per rule); the rules",
  'handed to the bot before it starts are not diffed (hashing both sets was about 4% of the warm profile). What is',
  'left is that compiling (cel-js parsing and checking each expression once, the rule compiler twice:',
  '`compileAction`, read paths, Daml types), the garbage collector, module loading (all of undici, about 80 ms:',
  "its index adds the request API to every dispatcher, so the client's Agent cannot be loaded without it) and",
  "decoding the participant's cached packages (protobuf).",
  'What would fix it: keep the compiled form of each rule in the cache (its checked CEL ASTs and compiled values,',
  'keyed by the files, parties and package ids, rebuilt into programs without parsing or checking), and compile',
  'once at a start against a participant when the config names no packages.',
];
