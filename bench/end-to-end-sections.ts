import { benchSection } from './bench-support.js';
import type { ProfileSummary } from './cpu-profile-summary.js';
import type { CommandCpu } from './command-cpu.js';
import type { E2eResult, E2eRun, Latency } from './e2e-bench.js';
import { halfOf } from './e2e-raw.js';
import { FLEET_LEASE_MS } from './e2e-fleet.js';
import type { IngestRow, IngestStep } from './ingest-bench.js';
import {
  header,
  int,
  median,
  pct,
  profileBlock,
  verdict,
  whereTimeGoes,
  type SectionContext,
} from './section-text.js';

/** The docs/benchmarks.md text of the ingest and end-to-end sections. */

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
    'Parse only: `JSON.parse` of each frame. Pipeline, the code the bot runs per frame: `parseWireJson` (`JSON.parse`, and',
    "the nulls Canton sends for absent fields dropped), the Canton-error check, `decodeUpdate`, the bot's `evaluateUpdate`",
    '(100 rules through their `RuleIndex`, the match counters)',
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
  closures: 'closures only',
  index: 'rule guards only',
  groups: 'rule guards and groups',
  thresholds: 'rule guards, groups and thresholds',
  allButThresholds: 'all but thresholds (the bot before them)',
  all: 'all six (what the bot runs)',
};

/** The steps table: each evaluation step of issue 16 alone, measured in the same rounds. */
function ingestSteps(rows: readonly IngestRow[]): string[] {
  const withSteps = rows.find((r) => r.steps !== undefined);
  const steps = withSteps?.steps;
  if (withSteps === undefined || steps === undefined) return [];
  const base = steps.find((s) => s.step === 'baseline')!.pipelineMedian;
  return [
    '',
    `Each step alone, ${withSteps.shape}, ${int(steps[0]!.events)} events per variant: in every round, parse only and the ${steps.length}`,
    'variants run in turn (the order rotates), so the rows compare within one run. Fold: `decimal("…")`, `date("…")`,',
    '`timestamp("…")` and `duration("…")` literals become values when the rules compile. Memo: `decimal(x)`/`date(x)` of',
    "text convert once per event, shared by the event's rules. Closures: conditions run as JavaScript closures built",
    'from their checked syntax tree where a common subset decides them (field reads, comparisons, `in`, text tests,',
    '`decimal`/`date`), cel-js otherwise and whenever a value is outside the subset (a test compares both on the bench',
    'rules, the examples and the fixtures). Guards: a rule whose first condition has an equality',
    '(`event.… == "USD"`, `in [...]`, `== parties.payer`, `date(…) == date("…")`) or a text test (`startsWith`,',
    "`endsWith`, `contains`) that the event's text fails is not evaluated. Groups (on top of the guards): the rules of",
    'an event whose guards test one field the same way for one party (`== "USD"`, `== "EUR"`, `in [...]`; prefixes or',
    "suffixes of one length; dates; one party) are decided by one lookup of the event's text in a Map, and counted once",
    'for the group. Thresholds (on top of the guards and groups): a rule whose first condition compares a subexpression',
    'over the event alone with a literal (`decimal(event.createArgument.amount) * 2 > decimal("3809")`, `>=`, `<`, `<=`;',
    "decimals, ints, dates and timestamps) is not evaluated when the event's value fails it: the rules comparing one",
    'subexpression the same way share one computation of it per event and one binary search over their literals, sorted',
    'once (at the first event that asks). The variants must agree on every intent and match (the bench checks it).',
    'Under every row, also "none": the lookups and comparisons made cheaper per event, and the match counters kept in',
    'place without an explanation per rule, over the rules whose trigger the event matches (see the reading below).',
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
  const pgRuns = r.runs.filter((x) => x.client === 'bot-pg');
  const pgRate = median(pgRuns.map(rate));
  const pgLatency =
    r.postgres !== undefined && 'latency' in r.postgres ? r.postgres.latency : undefined;
  const fleetRuns = r.runs.filter((x) => x.client === 'fleet-3');
  const fleetRate = median(fleetRuns.map(rate));
  const takeover =
    r.postgres !== undefined && 'latency' in r.postgres ? r.postgres.takeover : undefined;
  const pgSkipped =
    r.postgres !== undefined && 'skipped' in r.postgres ? r.postgres.skipped : undefined;
  return benchSection('e2e', [
    ...header('End to end vs raw capacity', c, 'e2e', '`bench/e2e-bench.ts`'),
    '',
    `Each run: a fresh sandbox process (invoices model, no faults), N = ${int(n)} invoices created first (64 at a time), then`,
    `one client cancels each of them (one ExerciseCommand per invoice, async submit, completion awaited, at most ${inFlight} in flight):`,
    `- **bot**: \`node bin/ledgerbot.js run\` (child process, SQLite journal, info logs) with one rule (created Invoice → exercise`,
    `  Cancel, concurrency ${inFlight}, no rate limit) and \`start:\` the offset before the invoices; done at the N-th \`intent finished\` log line;`,
    ...(r.postgres === undefined
      ? []
      : [
          '- **bot-pg**: the same bot with `state.postgres` (one instance, the journal in a fresh database of a PostgreSQL',
          `  the bench starts on 127.0.0.1, \`fsync=off\`: the durability of SQLite's WAL with \`synchronous=NORMAL\`)${pgSkipped === undefined ? ';' : `: **skipped: ${pgSkipped}**;`}`,
        ]),
    ...(fleetRuns.length === 0
      ? []
      : [
          `- **fleet-3**: three such bots with one schema and \`fleet: { name, leasePeriod: ${takeover?.leasePeriodMs ?? FLEET_LEASE_MS}ms }\`, started together on the`,
          '  backlog: the rule split in three (one per currency, `when: currency == …`; the invoices come in the three',
          `  currencies in turn), each of concurrency ${Math.ceil(inFlight / 3)}, so the fleet has as many commands in flight as the bot; the rules are`,
          '  shared out while they work (a member restarts its bot on each change of what it owns); done at N distinct intents finished;',
        ]),
    '- **raw**: a hand-written client (undici + ws, in the bench process): the same update stream and filter, the same',
    '  exercise per created contract, no rules, no journal; done at the N-th completion.',
    '',
    'Rates: N / (first submission → last completion); "start → done": N / (bot spawned or raw streams opened → last',
    "completion), which adds the bot's start-up. Bot times come from its log lines (`time`, milliseconds). Runs alternate (the order rotates each round).",
    '',
    '| client | round | N | start → done s | first submit → last completion s | commands/s | CPU µs/command: client (main thread) | sandbox | second half: commands/s | second half: CPU µs/command, client (main thread) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.runs.map(
      (x) =>
        `| ${x.client} | ${x.round + 1} | ${int(x.n)} | ${x.wallSeconds.toFixed(2)} | ${x.submitSeconds.toFixed(2)} | ${int(rate(x))} | ${cpuCell(x.cpu)} | ${x.cpu === undefined ? '—' : int(x.cpu.sandbox)} | ${x.secondHalf === undefined ? '—' : int(halfRate(x.n, x.secondHalf.seconds))} | ${cpuCell(x.secondHalf?.cpu)} |`,
    ),
    '',
    `Median commands/s: bot ${int(botRate)}, raw ${int(rawRate)}: **bot at ${pct(ratio)} of raw** (start → done: ${pct(botWall / rawWall)}).`,
    `Target: bot ≥ 80% of the raw client's throughput: ${verdict(ratio >= 0.8)}.`,
    ...secondHalfLines(bot, raw),
    ...cpuLines(bot, raw),
    ...(pgRuns.length === 0
      ? []
      : [
          '',
          `PostgreSQL journal: bot-pg median ${int(pgRate)} commands/s, **${pct(pgRate / botRate)} of the bot on SQLite** and ${pct(pgRate / rawRate)} of raw`,
          `(start → done: ${pct(median(pgRuns.map((x) => x.n / x.wallSeconds)) / botWall)} of SQLite's). The issue sets no target of its own for it;`,
          'measured in the same run as the rows above, with the server on the same machine (loopback: a database elsewhere adds its round trip to every commit).',
        ]),
    ...(fleetRuns.length === 0
      ? []
      : [
          '',
          `Fleet of three: median ${int(fleetRate)} commands/s, ${pct(fleetRate / pgRate)} of one instance on PostgreSQL, ${pct(fleetRate / botRate)} of the bot on SQLite, ${pct(fleetRate / rawRate)} of raw.`,
          'All three members, the sandbox and the database share the two cores here, so the row shows what sharing costs, not what',
          'three machines would give.',
          ...(takeover === undefined
            ? []
            : [
                '',
                `Lease take-over after a SIGKILL (round 1, lease ${int(takeover.leasePeriodMs)} ms): once the backlog was done and each member ran one rule, invoices of one`,
                "rule's currency came at about 20/s and that rule's owner was SIGKILLed. The lease was taken by another member",
                `${takeover.leaseTakenMs === undefined ? `not within ${int(takeover.waitedMs)} ms` : `${int(takeover.leaseTakenMs)} ms`} after the kill (the lease row's \`acquired_at\`), and work resumed (the rule's first intent finished`,
                `by another member) ${takeover.workResumedMs === undefined ? `not within ${int(takeover.waitedMs)} ms` : `${int(takeover.workResumedMs)} ms`} after it.`,
                `Target: work resumes within 2 lease periods (${int(2 * takeover.leasePeriodMs)} ms): ${verdict(takeover.workResumedMs !== undefined && takeover.workResumedMs <= 2 * takeover.leasePeriodMs)}.`,
              ]),
        ]),
    '',
    `Latency, bot running live (after its backlog in round 1): ${int(r.latency.count)} invoices created one by one at`,
    `${int(r.latency.ratePerSecond)}/s. Event time = the triggering transaction's \`recordTime\` (update stream); completion =`,
    "the `time` of the bot's `intent finished` log line, submit = that minus the line's `recordToCompletionMs` plus its",
    '`recordToSubmitMs` (first attempt). Milliseconds (log times have millisecond resolution).',
    ...(pgLatency === undefined
      ? []
      : [
          `bot-pg: the same, after its backlog in its first run (${int(pgLatency.count)} invoices).`,
        ]),
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
    ...(pgLatency === undefined
      ? []
      : [
          `| bot-pg: event → submit | ${ms(pgLatency.toSubmit)} |`,
          `| bot-pg: event → completion | ${ms(pgLatency.toCompletion)} |`,
        ]),
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

function cpuCell(cpu: CommandCpu | undefined): string {
  return cpu === undefined ? '—' : `${int(cpu.client)} (${int(cpu.clientMain)})`;
}

/** Commands/s of a run's second half: N − ⌈N/2⌉ commands after the ⌈N/2⌉-th completion. */
function halfRate(n: number, seconds: number): number {
  return (n - halfOf(n)) / seconds;
}

/**
 * The second halves side by side. Both clients run faster in theirs, for reasons that differ:
 * what differs is said, not measured apart.
 */
function secondHalfLines(bot: readonly E2eRun[], raw: readonly E2eRun[]): string[] {
  const rates = (runs: readonly E2eRun[]): number[] =>
    runs.flatMap((x) => (x.secondHalf === undefined ? [] : [halfRate(x.n, x.secondHalf.seconds)]));
  const b = rates(bot);
  const w = rates(raw);
  if (b.length === 0 || w.length === 0) return [];
  const cpu = (runs: readonly E2eRun[]): number[] =>
    runs.flatMap((x) => (x.secondHalf?.cpu === undefined ? [] : [x.secondHalf.cpu.client]));
  const bc = cpu(bot);
  const allCpu = bot.flatMap((x) => (x.cpu === undefined ? [] : [x.cpu.client]));
  return [
    '',
    `Second halves (from the ⌈N/2⌉-th completion to the last; not the target's measure): bot ${int(median(b))}, raw ${int(median(w))}`,
    `commands/s: bot at ${pct(median(b) / median(w))} of raw.${bc.length === 0 || allCpu.length === 0 ? '' : ` The bot's CPU per command in its second half: ${int(median(bc))} µs, against ${int(median(allCpu))} µs over all N.`}`,
    'Both run faster in their second halves, and what differs between them is not measured apart here: the bot is a',
    'fresh process whose code V8 compiles while the backlog runs (about three in four of its optimised compilations after',
    'start-up came in its first 4,000 commands, one run with `--trace-opt`), while the raw client runs in the bench',
    'process, warm from creating the invoices; and the raw client reads the whole backlog from the update stream in its',
    'first half (it reads without holding back), which the bot spreads over its run (at most 256 frames ahead).',
  ];
}

/**
 * The CPU per command of the bot and the raw client (medians of their runs), and what the bot's
 * main thread alone allows: its event loop does the work of every command, so 10⁶ / its µs per
 * command is the most it can do with a core to itself.
 */
function cpuLines(bot: readonly E2eRun[], raw: readonly E2eRun[]): string[] {
  const of = (runs: readonly E2eRun[]) => {
    const cpus = runs.flatMap((x) => (x.cpu === undefined ? [] : [x.cpu]));
    return cpus.length === 0
      ? undefined
      : {
          client: median(cpus.map((c) => c.client)),
          main: median(cpus.map((c) => c.clientMain)),
          sandbox: median(cpus.map((c) => c.sandbox)),
        };
  };
  const b = of(bot);
  const w = of(raw);
  if (b === undefined || w === undefined) return [];
  return [
    '',
    `CPU per command (medians; /proc, over the backlog's commands): the bot ${int(b.client)} µs, ${int(b.main)} µs of it on its main thread`,
    `(the rest: the garbage collector's, the compiler's and the store's checkpoint threads), its sandbox ${int(b.sandbox)} µs; the raw client ${int(w.client)} µs`,
    `(the bench process; main thread ${int(w.main)} µs), its sandbox ${int(w.sandbox)} µs. The bot's event loop alone allows at most`,
    `${int(1e6 / b.main)} commands/s with a core to itself, ${pct(1e6 / b.main / median(raw.map((x) => x.n / x.submitSeconds)))} of the raw client's median; the two cores are shared by the bot, its`,
    'sandbox and (for raw) the bench process.',
  ];
}

const INGEST_MISSED: readonly string[] = [
  'Reading: parse only is one `JSON.parse` per frame; the pipeline also runs, per event, every rule whose trigger',
  'matches it ("rules matched / event": the 100 bench rules watch the same three templates, so about a quarter of them',
  'match each event) and builds the intents of the events that fire ("events firing"; `fireRule`: rendering and a',
  'sha256 commandId each). Tried (issue 16), each step measured alone in the table above: literals folded when the',
  "rules compile; `decimal(x)`/`date(x)` of an event field converted once per event, in a memo the event's rules share",
  '(with decimal arithmetic over the event alone, such as `decimal(event.createArgument.amount) * 2`); conditions run',
  'as closures built from their checked syntax tree, cel-js only for what the subset leaves out (`exists`, durations,',
  'doubles) or a value outside it; rules skipped without CEL when their first condition has an equality or a text',
  "test on an event field that the event's text fails (equal guards asked once per event, on the wire event, so an event",
  'whose rules all fail them builds no CEL variable); and, on top of the guards, rules grouped so that one lookup of the',
  "event's text decides a group (the currency rules of one party by a Map from the currency to the rules that need it,",
  "prefixes and suffixes of one length, dates, one party), the group counted once and its rules' counters derived when",
  'the metrics are read (the same counts, in the same order, as one count per rule: a test compares them). Under every',
  'row: the candidate rules of an event looked up by its template id; the trigger checks (kind, template, package,',
  'choice) made once per template, package and choice; the match counters kept in place, by rule position per rule',
  'index, without an explanation per matched rule (`explain` and `backtest` still build explanations); guard reads kept',
  "by a slot per field; a field path such as `event.createArgument.amount` read by one closure; and the event's CEL",
  'variable made as one object literal when its fields come in the order the JSON Ledger API sends them (650 to 250 ns',
  'per event). The groups, the counted path without explanations and the literal (2026-11-26) gave +23% (ledger-effects)',
  'and +24% (acs-delta) pipeline events/s, medians of 8 rounds alternating the code before and after them, CPU time;',
  'not evaluating the `when` of a rule that fires a second time (fireRule did) about 1% more, within the noise.',
  'Thresholds (2026-11-26, the row "all but thresholds" above is the bot before them): a rule whose first condition',
  'compares a subexpression over the event alone with a literal is skipped when the value fails it, the rules of one',
  'subexpression and comparison decided by one computation and one binary search over their sorted literals per event',
  '(the ten doubled-amount rules above their party guard, the Payment windows): CEL evaluations per event 11.0 to 7.3',
  '(ledger-effects) and 17.6 to 13.6 (acs-delta); +3% (ledger-effects) and +10% (acs-delta) CPU time per event, medians',
  'of 8 rounds alternating the index with and without them. The families are made at the first event that asks, so a',
  'warm start does not read the stored programs for them.',
  "What is left, in the profile below: `JSON.parse` itself (most of the `pipeline` function's self time: a V8 builtin is",
  'counted in its caller), the garbage collector, then the CEL evaluation of the rules no guard, group or threshold',
  'decides (the closures and decimal.js, about 7 evaluations per event: the currency and amount-window rules have their',
  'amount thresholds in their second and third conditions, which run only once the first held: 5.7 of the 7 per',
  'invoice; and each Receipt runs the ten `matches` rules), the intents (rendering, and sha256 for the commandId: left as it is, since',
  'the ids are the ledger deduplication key and must not change) and the copy of the event into its CEL variable (a',
  'view that is not a copy was not done: cel-js and the closures read own fields, and `offset`, `nodeId` and `createdAt`',
  'must read typed). 50% leaves all but the parse as much time as the parse itself (4 to 6 µs per event here), where',
  'the pipeline spends about two and a half times that. Tried on 2026-11-27, not kept: thresholds in later conditions (a',
  "condition after the first taken as false, without evaluating it, when its threshold's family cut shows it false,",
  'once the conditions before it held, on the counted path; the same intents, errors and counters, a test showed): on',
  'their own, on top of guards, groups and thresholds without the CEL steps, 54,510 to 58,385 events/s (+7%); with all',
  'the steps on, as the bot runs, 64,540 against 64,509 (medians of the same rounds, ledger-effects): the closures and',
  "the conversion memo already make those conditions cost about what the family's lookup costs.",
  'Fewer objects per event (2026-11-27, kept; sampling heap profiles of the pipeline, ledger-effects): 10.9 to 6.5 KB',
  "allocated per event, 1.7 KB of it `JSON.parse`'s own, and the garbage collector's share of the profile about 9.5% to",
  '6.5%. A guard that reads the CEL variable got a closure per visited rule (about 1 KB per event): now a function and',
  "its argument. The event's guard reads were a fresh object whose arrays grew as the guard ids came (about 1.3 KB): now",
  'one per rule index, moved on to the next event by an increment (each verdict stamped with its event). A `for…of`',
  'over an array or a destructured tuple that V8 leaves unoptimised allocates an iterator result per step: the loops of',
  'the hot path are indexed. Emptying the reused reads with `Array.prototype.fill` and `Map.clear` (a call into the',
  'runtime, a new table) took 4% of the time at first: loops and a remembered last date text instead. Together +10%',
  '(ledger-effects) and +10% (acs-delta) pipeline events/s, medians of 8 rounds alternating the code before and after',
  'in one process. The pipeline also parses as the bot does now, with `parseWireJson` (it had used a bare `JSON.parse`,',
  'leaving out the drop of the nulls Canton sends for absent fields: 2.2 µs per frame, 1.0 µs since it walks with',
  '`for…in` instead of `Object.keys`), and the one-literal copy of the event takes the events that drop left without a',
  'trailing field (a created event of a template without a key, an exercised event of a template choice) and archived',
  'events, which had gone key by key (+2 to 3%). What is left is spread thin: no function but the parse is over 4% of',
  'the profile.',
];
const LATENCY_MISSED: readonly string[] = [
  "Reading (latency): the p50 is a few milliseconds, like the raw client's; the p99 is made by stalls of the",
  "bot's event loop, which delay every event queued behind them, on top of what the machine gives (the raw rows).",
  'Three full runs on the quiet machine on 2026-11-26 (load about 1.1) gave p99 7, 11 and 78 ms: a few stalls',
  'of the 2,000 paced events decide the target.',
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
  'Reading: the bot shares two cores with the sandbox (its profile shows some idle time, waiting for the',
  'sandbox, which the raw client keeps as busy with less CPU of its own), and the raw client keeps no books. The largest share of its time is still the intent journal (`ledgerbot store/` and',
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
  'completion one more, and the log is folded into `intents` every 500 rows (about one upsert per intent). Its',
  'share of the profile went from about 38% (2026-11-23) to about 23% (`ledgerbot store/` plus `better-sqlite3`,',
  '2026-11-26 at load 6), most of it now the COMMIT of each write group (`sqliteTransaction`) and the folds.',
  'CPU, not wall time (2026-11-26, code a1fd52d, one run each of N = 20,000 at load about 5, measured as the CPU',
  'column above is): the bot used 345 µs per command, 274 µs of',
  'it on its main thread, and its sandbox 210 µs; the raw client 101 µs (89 µs on its main thread), its sandbox 183 µs.',
  'On two cores the bot and its sandbox (555 µs per command) can do at most about 3,600 commands/s even with no',
  'waiting, the raw client and its (283 µs) about 7,000: 80% of raw needs the bot at about 200 µs per command in all,',
  "some 40% less than now. Its main thread's share, by `node --cpu-prof` of the bot child (N = 10,000): the journal's",
  'commits 20% (BEGIN/COMMIT with the WAL pages and checkpoints they write 9%, log rows 4%, folds 5%) and recording 7% (the JSON text',
  "of each intent's payload and event, and the payload parsed back for its record), the HTTP submissions about 11%",
  '(undici, `writev`), stdout 5% (`perf` puts 0.6% of the CPU in that write: the rest is waiting for the pipe), the',
  "garbage collector 6%, idle 13%. By `perf` of the whole process, the main thread is 77% of the bot's CPU, the rest",
  "the garbage collector's and the optimising compiler's threads; SQLite is 11%, a third of it the WAL checkpoint.",
  'The journal alone (its writes at the sizes of this run, 32 intents per group) costs 70-77 µs of main thread per',
  'intent. The WAL checkpoints now run on a thread of their own (2026-11-27, `WalCheckpointer`: a second connection,',
  'PASSIVE, asked at most every 100 ms after a commit; the writer checkpoints once itself when the WAL reaches 10,000',
  'frames, so that it starts over). Tried first on 2026-11-26 and judged by the CPU of the journal alone (73.5 against',
  '73.8 µs of main thread per intent), which cannot show what it removes: with `synchronous = NORMAL` a checkpoint',
  "fsyncs the WAL and the database file, and inside a commit those waits stopped the bot's event loop. A diagnostic",
  'run with `synchronous = OFF` (which gives up the power-loss guarantee: not a mode the bot has) was faster in each of',
  '5 alternating pairs (N = 20,000: 2,168–2,584 against 1,860–2,392 commands/s, medians 2,315 and 1,972, +17%). With',
  'the thread, against the code before it: faster in 7 of 9 alternating pairs, medians +11% (2,444 and 2,209, 4 pairs)',
  'and +3% (2,462 and 2,393, 5 pairs), main thread 301 against 314 µs per command (5 pairs). Tried on 2026-11-26,',
  'none beyond the noise, none kept: the automatic',
  'checkpoint at 4,000 or 16,000 pages instead of 1,000; a group commit window of 2 ms instead of each event-loop turn',
  '(a group already holds about 30 log rows: about 600 group writes for 10,000 intents); 8 or 16 KiB pages; a 32 MB new space',
  'for the garbage collector; on 2026-11-27, a 64 MiB SQLite page cache (`cache_size`, default 2 MiB): 272-325 µs of',
  "CPU per command with it, 264-304 without (3 alternating runs of N = 20,000 each). What is left is the journal's bytes",
  "(each intent's payload and event text, about 2 KB,",
  'written to the log, then to `intents` by the fold, then by the WAL checkpoint) and the bookkeeping around each',
  'command (about 185 µs of main thread more than the raw client), in many small parts none of which is over 10%.',
  'Measured on 2026-11-27 (scratch builds, alternating runs of N = 20,000 outside the bench, CPU as in the table):',
  "with the journal's SQL writes skipped (memory kept as usual; not a mode the bot has) the bot",
  'did 2,786–3,041 commands/s against 2,172–2,655 with them (medians of 4: 2,948 and 2,367, +25%), its main thread 259',
  'against 336 µs per command. The two cores are not full while the bot runs (at the rates of the table, the bot and its',
  "sandbox keep about 1.3 of them busy), so the writes could go to a worker thread: a simulation that hands each group's",
  'statements to a worker and does not wait for its commit (an upper bound: write-ahead needs the wait) did 2,362–2,511',
  'against 2,127–2,227 (medians 2,418 and 2,154, +12%), main thread 286 against 373 µs, CPU in all about the same.',
  "Neither reaches 80% of raw: the rest of the gap is the journal's bookkeeping in memory (about 16% of the profile with",
  "the writes skipped: the entry, row and record of each change, the payload's and event's JSON text), the HTTP",
  'submissions, the log line and the garbage collector. Also tried on 2026-11-27, none kept: 128 or 256 commands in',
  'flight instead of 64 (slower, more CPU per command); folding the log every 64 rows instead of 500, and 32 frames of',
  'read-ahead on the update stream instead of 256 (the same 13–16 full collections per run either way);',
  '`--single-threaded-gc` (about 9% slower); `--maglev`, `--interrupt-budget=16384` and `--max-semi-space-size=32`',
  '(within the noise); at a fold, the open intents never folded carried over into the new log instead of written to',
  '`intents` (where each in-flight intent is written twice, open and then finished): 97–113 against 102–113 µs of main',
  'thread per intent in the journal alone, 12,492 against 12,531 bytes written per intent (the carried row holds the',
  'same facts). The raw client in a fresh process of its own did 5,663–6,173 commands/s against 6,135–6,279 in',
  'the bench process (3 alternating runs each).',
  'Where a run of the bot loses its time (2026-11-27, scratch runs of N = 20,000 outside the bench, CPU from /proc per',
  'thread): in eighths of the run, the first 2,500 commands went at 1,361–1,565 commands/s and the other seven',
  'eighths at 3,000–4,500. In that first eighth the bot used 556–704 µs of CPU per command (328–420 on its main thread,',
  "the rest V8's compiler and collector threads) and its sandbox 328–348; afterwards 232–348 (main 192–268) and",
  "108–216. The bot had its 64 commands in flight (the rule's concurrency) in every 50 ms sample from 0.42 s after its",
  "first submission to the end. Before that it had one: the sandbox sent a stream's backlog in one event-loop turn,",
  "so the update stream's second frame came 326 ms after its first, and the sandbox served no submission meanwhile.",
  'It now sends a backlog 256 elements per turn under backpressure, as Canton pages its streams (the second frame',
  'came at 14 ms, all 20,000 at 354 ms instead of 473); the bot and the raw client had both waited through it. Per thread, over a',
  'whole run: the main thread 261 µs per command, the four V8 worker threads 74, the WAL checkpoint thread 14; in the',
  'second half 243, 54 and 13. With `--trace-gc`: 128 scavenges of 3–4.6 ms each on the main thread and 15',
  'mark-compacts (30–40 MB down to 16–21 MB, about every 330 ms) per run. Tried, none beyond the noise: `--always-sparkplug`,',
  '`--no-lazy-feedback-allocation` and both (the first eighth stayed at 1,314–1,516 commands/s), `--v8-pool-size=1`',
  'and `=2` (2 rounds each).',
  "Also on 2026-11-27, after the run above, kept: an event's first intent takes its place among the 64 before it is recorded, so at the",
  'bound it is recorded in the turn its first attempt starts, and the journal writes one log row for both (every',
  'intent of the backlog waited for a place, so each cost three rows: recorded, submitted, finished; now two). In 10',
  "alternating pairs of runs (N = 20,000, this machine's speed moving between them) the bot with it was faster in 7,",
  "the median of the pairs' ratios +4%, but the medians of the rates were the same (2,612 and 2,610 commands/s): no gain",
  'shown beyond the noise.',
  'What bounds the rate (2026-11-27, later, scratch runs of N = 20,000 outside the bench): with 32, 64 and 128',
  'commands in flight the bot did 3,149, 3,171 and 3,159 commands/s. The rate does not follow the number of commands',
  'waiting for the sandbox, so a run is bound by the CPU of the two cores (the bot, its sandbox, the reader of its log),',
  "not by round trips: 80% of raw asks for less work per command, not more overlap. The bot's stdout written to a file",
  "instead of the bench's pipe made no difference (4 alternating pairs). The log's fold into `intents` (every 500",
  'rows) costs about a tenth: the same build folding only after the run did 3,487–3,807 against 3,284–3,539 (4',
  'alternating pairs, medians +10%), but that only moves the upserts past the end of the measure, so it is no mode the',
  'bot could have. A sampling heap profile: 78.5 KB allocated per command, spread over many sites (the largest: the',
  "journal's new row with the payload's and event's JSON text 3.9 KB, the HTTP submission 3.8 KB, the websocket frame",
  'text 3.8 KB); `--trace-gc-nvp`: a scavenge every 12.7 MB allocated, about 2 MB surviving it and 1.1 MB promoted,',
  'which makes the mark-compacts. What the fold writes (a scratch micro-benchmark of its upsert over rows of this',
  'run, 500 per transaction, CPU time): 22 µs per row with the six indexes of `intents`, 17 µs without the secondary',
  "ones, 12–14 µs with the event's JSON text left out: that text (1,327 of the row's 2,100 bytes here: the created",
  'event as the update stream sent it, kept for the console, the dead letters and the journal export) is most of what',
  'the journal writes, in the log row and again in the fold. Staging the rows in SQLite and folding them with one',
  '`INSERT … SELECT` was slower (26–33 µs per row), so binding the values from JavaScript is not the cost. A build',
  "that journals no event text at all (a scratch switch, not a mode the bot has: the console's trigger card, the dead",
  'letters and the journal export show the event) was faster in 4 of 4 alternating pairs (+4 to +11%, median +8.5%),',
  'its CPU per command 21–45 µs lower: worth a design that keeps what users see of the event in fewer bytes, and',
  'still far from 80% on its own.',
  'Whose CPU bounds it (2026-11-27, evening, scratch runs of N = 20,000 outside the bench): with the bot pinned to one',
  'core (`taskset`) and its sandbox and the bench on the other, it did 2,951 and 3,149 commands/s, as unpinned, its',
  "core about 92% busy (292 µs per command at 3,149/s): the bot's own CPU, all its threads together, is the bound. Per",
  "thread in a run's second half: the main thread 250 µs per command, V8's four worker threads 45, the WAL checkpoint",
  'thread 16; with `--single-threaded-gc` the workers fell to 6 and the main thread rose by 48, so the garbage',
  'collector costs about 50 µs of each command. With `--trace-gc-nvp`: 123–126 scavenges and 122–130 MB promoted per',
  '20,000 commands (about 6.5 KB per command), then dead within a few hundred milliseconds (a heap snapshot in mid-run',
  'holds 19 MB after a full collection, a third of it code), which is what the 15 mark-compacts collect. Promotion was',
  '120 MB with 16 frames of read-ahead instead of 256 (so not the frames) and 98 MB with a fold every 20 log rows (the',
  "journal's entries, held in memory until the fold, are about a quarter of it); folding every 100 or 200 rows was",
  'slower than every 500 (3 alternating rounds). The fold writing neither payload nor event (an upper bound for a',
  "journal that writes an intent's facts once, into a table of their own, instead of into the log and again by the",
  'fold) gave +6%, +7% and 0% in 3 alternating pairs.',
];
