import { Session } from 'node:inspector';
import { silentLogger } from '../src/core/logger.js';
import { isJsCantonError } from '../src/ledger/js-canton-error.js';
import { decodeUpdate } from '../src/ledger/ws/update-stream.js';
import { parseWireJson } from '../src/ledger/wire/parse-wire-json.js';
import { CelEnvironment, type CelTuning } from '../src/rules/cel/cel-environment.js';
import { loadRules } from '../src/rules/load-rules.js';
import { indexRules, type IndexTuning, type RuleIndex } from '../src/rules/rule-index.js';
import { BotMetrics } from '../src/runtime/bot-metrics.js';
import { evaluateUpdate } from '../src/runtime/evaluate-update.js';
import { journalEntriesOf } from '../src/runtime/journal-entry.js';
import { benchRules, type RuleShape } from './bench-rules.js';
import type { Profile } from './cpu-profile-summary.js';
import { frameTemplate, maxOffset, renderFrame } from './frame-template.js';
import type { Recording } from './recorded-frames.js';

/**
 * Ingest vs the limit: the recorded update frames (text, as the websocket delivers them) cycled
 * to `events` events with increasing offsets (and update ids that differ per cycle), through
 *  - parse only: `JSON.parse` of each frame (the floor no consumer can beat), and
 *  - the bot's ingest path: `parseWireJson` (the websocket reader's parse: `JSON.parse`, and the
 *    nulls Canton sends for absent fields dropped), the Canton-error check of the reader,
 *    `decodeUpdate` (src/ledger/ws/update-stream.ts), `evaluateUpdate` (the bot's own
 *    evaluation of one update: the 100 bench rules through their `RuleIndex`, the counters in
 *    `BotMetrics`) and `journalEntriesOf` (the journal entry: commandId, payload, trigger) for
 *    every intent.
 * The SQLite journal write and the submission are not part of it (the end-to-end section has
 * them). Rounds alternate parse-only and pipeline; best and median per side.
 */
export type IngestRow = {
  readonly shape: RuleShape;
  readonly frames: number;
  readonly distinctFrames: number;
  readonly bytesPerFrame: number;
  readonly events: number;
  readonly parseBest: number;
  readonly parseMedian: number;
  readonly pipelineBest: number;
  readonly pipelineMedian: number;
  /** Events that produced at least one intent, over all events. */
  readonly firingFraction: number;
  readonly intents: number;
  readonly rulesMatchedPerEvent: number;
  /** Each evaluation step on or off, measured side by side in the same rounds (one shape). */
  readonly steps?: readonly IngestStepRow[];
};

/**
 * The evaluation steps of issue 16, each measurable alone: literal folding, the conversion memo
 * and conditions run as closures (CelTuning), and the rule guards of the index, its groups and
 * its threshold guards, which need the guards (IndexTuning); all of them, and all but the
 * thresholds (the bot before them, side by side).
 */
export type IngestStep =
  | 'baseline'
  | 'fold'
  | 'memo'
  | 'closures'
  | 'index'
  | 'groups'
  | 'thresholds'
  | 'allButThresholds'
  | 'all';

export type IngestStepRow = {
  readonly step: IngestStep;
  readonly events: number;
  readonly pipelineBest: number;
  readonly pipelineMedian: number;
  /** The parse-only median of the same rounds. */
  readonly parseMedian: number;
};

const NONE: CelTuning = { foldLiterals: false, memoizeConversions: false, closures: false };

const STEPS: readonly { step: IngestStep; cel: CelTuning; index: IndexTuning }[] = [
  { step: 'baseline', cel: NONE, index: { guards: false } },
  { step: 'fold', cel: { ...NONE, foldLiterals: true }, index: { guards: false } },
  { step: 'memo', cel: { ...NONE, memoizeConversions: true }, index: { guards: false } },
  { step: 'closures', cel: { ...NONE, closures: true }, index: { guards: false } },
  { step: 'index', cel: NONE, index: { guards: true, groups: false, thresholds: false } },
  { step: 'groups', cel: NONE, index: { guards: true, groups: true, thresholds: false } },
  { step: 'thresholds', cel: NONE, index: { guards: true, groups: true, thresholds: true } },
  { step: 'allButThresholds', cel: {}, index: { thresholds: false } },
  { step: 'all', cel: {}, index: {} },
];

function eventsIn(text: string): number {
  const v = JSON.parse(text) as { update?: { Transaction?: { value: { events: unknown[] } } } };
  return v.update?.Transaction?.value.events.length ?? 0;
}

type Counters = { fired: number; intents: number; matched: number; sink: number };

function pipeline(
  texts: readonly string[],
  index: RuleIndex,
  parties: Readonly<Record<string, string>>,
  metrics: BotMetrics,
  c: Counters,
): void {
  for (const text of texts) {
    const value: unknown = parseWireJson(text);
    if (isJsCantonError(value)) throw new Error('a recorded frame is a Canton error');
    const element = decodeUpdate(value, silentLogger);
    if (element === undefined || element.kind !== 'transaction') continue;
    const tx = element.transaction;
    const recordMs = Date.parse(tx.recordTime);
    const evaluation = evaluateUpdate(tx, element.offset, {
      index,
      parties,
      now: recordMs,
      metrics,
      live: true,
    });
    c.matched += evaluation.matched;
    if (evaluation.intents.length > 0) {
      for (const entry of journalEntriesOf(evaluation, recordMs, 'bench')) {
        c.sink += entry.commandId.length;
      }
      const firing = new Set(
        evaluation.intents.map((i) => (i.triggerKey.kind === 'event' ? i.triggerKey.nodeId : -1)),
      );
      c.fired += firing.size;
      c.intents += evaluation.intents.length;
    }
  }
}

function parseOnly(texts: readonly string[], c: Counters): void {
  for (const text of texts) {
    const value = JSON.parse(text) as { update?: unknown };
    if (value.update !== undefined) c.sink++;
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
};

/**
 * A CPU profile (node:inspector, in this process) of the pipeline over `events` events of the
 * LEDGER_EFFECTS frames, after the measured rounds: where the pipeline's time goes.
 */
export async function profileIngest(rec: Recording, events: number): Promise<Profile> {
  const distinct = rec.frames['ledger-effects'];
  const templates = distinct.map(frameTemplate);
  const perCycle = distinct.map(eventsIn).reduce((a, b) => a + b, 0);
  const span = maxOffset(templates) + 1;
  const { ruleSet } = loadRules([{ path: 'bench.yaml', text: benchRules(100, 'ledger-effects') }], {
    parties: rec.parties,
  });
  const index = indexRules(ruleSet);
  const metrics = new BotMetrics();
  const c: Counters = { fired: 0, intents: 0, matched: 0, sink: 0 };
  const cycles = Math.ceil(events / perCycle);
  const batches = Array.from({ length: cycles }, (_, cycle) =>
    templates.map((t) => renderFrame(t, cycle * span, cycle)),
  );
  const session = new Session();
  session.connect();
  const post = (method: string): Promise<unknown> =>
    new Promise((resolve, reject) =>
      session.post(method, (err, result) => (err === null ? resolve(result) : reject(err))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  for (const texts of batches) pipeline(texts, index, rec.parties, metrics, c);
  const { profile } = (await post('Profiler.stop')) as { profile: Profile };
  session.disconnect();
  return profile;
}

function indexFor(
  rec: Recording,
  shape: RuleShape,
  cel: CelTuning,
  tuning: IndexTuning,
): RuleIndex {
  const { ruleSet, problems } = loadRules([{ path: 'bench.yaml', text: benchRules(100, shape) }], {
    parties: rec.parties,
    cel: CelEnvironment.create(cel),
  });
  if (problems.length > 0) throw new Error(`bench rules: ${JSON.stringify(problems[0])}`);
  return indexRules(ruleSet, tuning);
}

/**
 * Each step alone and all together, over `events` events of one shape: every round runs parse
 * only and each variant once, in an order that rotates per round. The variants must agree on
 * every count (they are the same rules, evaluated with or without each step).
 */
async function runSteps(
  rec: Recording,
  shape: RuleShape,
  options: { readonly events: number; readonly rounds: number },
): Promise<IngestStepRow[]> {
  const distinct = rec.frames[shape];
  const templates = distinct.map(frameTemplate);
  const perCycle = distinct.map(eventsIn).reduce((a, b) => a + b, 0);
  const span = maxOffset(templates) + 1;
  const cycles = Math.ceil(options.events / perCycle);
  const variants = STEPS.map((s) => ({ ...s, index: indexFor(rec, shape, s.cel, s.index) }));
  const rates = new Map<IngestStep | 'parse', number[]>();
  const counts = new Map<IngestStep, string>();
  for (const v of variants) {
    pipeline(distinct, v.index, rec.parties, new BotMetrics(), {
      fired: 0,
      intents: 0,
      matched: 0,
      sink: 0,
    });
  }
  const sides: (IngestStep | 'parse')[] = ['parse', ...STEPS.map((s) => s.step)];
  for (let round = 0; round < options.rounds; round++) {
    for (let i = 0; i < sides.length; i++) {
      const side = sides[(i + round) % sides.length]!;
      const variant = variants.find((v) => v.step === side);
      const metrics = new BotMetrics();
      const c: Counters = { fired: 0, intents: 0, matched: 0, sink: 0 };
      let ms = 0;
      for (let cycle = 0; cycle < cycles; cycle++) {
        const texts = templates.map((t) => renderFrame(t, cycle * span, cycle));
        const started = performance.now();
        if (variant === undefined) parseOnly(texts, c);
        else pipeline(texts, variant.index, rec.parties, metrics, c);
        ms += performance.now() - started;
      }
      rates.set(side, [...(rates.get(side) ?? []), (cycles * perCycle) / (ms / 1000)]);
      if (variant !== undefined) {
        const seen = `${c.fired}/${c.intents}/${c.matched}/${c.sink}`;
        const earlier = counts.get(counts.keys().next().value ?? variant.step);
        if (earlier !== undefined && earlier !== seen) {
          throw new Error(
            `ingest step ${side} gave ${seen} (fired/intents/matched/sink), not ${earlier}`,
          );
        }
        counts.set(variant.step, seen);
      }
      await new Promise((r) => setImmediate(r));
    }
  }
  const parseMedian = median(rates.get('parse')!);
  return STEPS.map(({ step }) => ({
    step,
    events: cycles * perCycle,
    pipelineBest: Math.max(...rates.get(step)!),
    pipelineMedian: median(rates.get(step)!),
    parseMedian,
  }));
}

/** Events per variant in the steps table: a fifth of the main rows', at most 200,000. */
const stepEvents = (events: number): number => Math.min(200_000, Math.max(5_000, events / 5));

export async function runIngestBench(
  rec: Recording,
  options: { readonly events: number; readonly rounds: number },
): Promise<IngestRow[]> {
  const rows: IngestRow[] = [];
  for (const shape of ['ledger-effects', 'acs-delta'] as const) {
    const distinct = rec.frames[shape];
    const templates = distinct.map(frameTemplate);
    const perFrame = distinct.map(eventsIn);
    const perCycle = perFrame.reduce((a, b) => a + b, 0);
    const span = maxOffset(templates) + 1;
    const cycles = Math.ceil(options.events / perCycle);
    const { ruleSet, problems } = loadRules(
      [{ path: 'bench.yaml', text: benchRules(100, shape) }],
      { parties: rec.parties },
    );
    if (problems.length > 0) throw new Error(`bench rules: ${JSON.stringify(problems[0])}`);
    const index = indexRules(ruleSet);
    const metrics = new BotMetrics();

    const parseRates: number[] = [];
    const pipelineRates: number[] = [];
    let counts: Counters = { fired: 0, intents: 0, matched: 0, sink: 0 };
    const warm: Counters = { fired: 0, intents: 0, matched: 0, sink: 0 };
    pipeline(distinct, index, rec.parties, metrics, warm);
    parseOnly(distinct, warm);
    for (let round = 0; round < options.rounds; round++) {
      for (const side of round % 2 === 0 ? ['parse', 'pipeline'] : ['pipeline', 'parse']) {
        const c: Counters = { fired: 0, intents: 0, matched: 0, sink: 0 };
        let ms = 0;
        for (let cycle = 0; cycle < cycles; cycle++) {
          // Rendering the cycle's frames is setup, outside the clock, for both sides alike.
          const texts = templates.map((t) => renderFrame(t, cycle * span, cycle));
          const started = performance.now();
          if (side === 'parse') parseOnly(texts, c);
          else pipeline(texts, index, rec.parties, metrics, c);
          ms += performance.now() - started;
        }
        const rate = (cycles * perCycle) / (ms / 1000);
        if (side === 'parse') parseRates.push(rate);
        else {
          pipelineRates.push(rate);
          counts = c;
        }
        // Yield between halves: timers (the load sampler) and GC get their turn.
        await new Promise((r) => setImmediate(r));
      }
    }
    const events = cycles * perCycle;
    const steps =
      shape === 'ledger-effects'
        ? await runSteps(rec, shape, { events: stepEvents(options.events), rounds: options.rounds })
        : undefined;
    rows.push({
      ...(steps === undefined ? {} : { steps }),
      shape,
      frames: cycles * distinct.length,
      distinctFrames: distinct.length,
      bytesPerFrame: distinct.reduce((a, f) => a + f.length, 0) / distinct.length,
      events,
      parseBest: Math.max(...parseRates),
      parseMedian: median(parseRates),
      pipelineBest: Math.max(...pipelineRates),
      pipelineMedian: median(pipelineRates),
      firingFraction: counts.fired / events,
      intents: counts.intents,
      rulesMatchedPerEvent: counts.matched / events,
    });
  }
  return rows;
}
