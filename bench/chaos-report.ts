import { machineLine } from './bench-support.js';
import type { BadInputResult } from './chaos-bad-input.js';
import { RELOADED_RULE_ID, type BotCounters, type OutageExit } from './chaos-bots.js';
import type { DriverStats, FaultStats } from './chaos-ledger.js';
import type { RuleOwnership } from './chaos-fleet.js';
import type { ChaosPlan } from './chaos-plan.js';
import type { LedgerVerdict, StoreVerdict } from './chaos-verdict.js';

/** Everything a chaos run measured, for docs/reliability.md and the exit code. */
export type TimelineEntry = { readonly t: number; readonly what: string };

export type BotSummary = {
  readonly name: string;
  readonly processes: number;
  readonly counters: BotCounters & { warnings: number; errors: number };
  readonly unexpectedExits: readonly string[];
  /** Processes that stopped by themselves while the store's server was down (`--store postgres`). */
  readonly outageExits?: readonly OutageExit[];
  readonly stopCode: number | null | undefined;
  /** The rule ids the replica's last process ran just before the final SIGTERM. */
  readonly rulesAtEnd: readonly string[];
};

/** The crash of the store's server (`--store postgres`), and what each running replica did. */
export type StoreCrash = {
  readonly downMs: number;
  /** The replicas running at the crash: did each stop by itself (its failed commit) in time. */
  readonly replicas: readonly { readonly name: string; readonly stopped: boolean }[];
};

/** `--fleet N`: the member paused past its lease, and whether it then said it lost its rules. */
export type FleetPause = {
  readonly replica: string;
  readonly pausedMs: number;
  /** The rules it ran when it was paused. */
  readonly rules: readonly string[];
  readonly fenced: boolean;
};

export type ChaosResult = {
  readonly plan: ChaosPlan;
  readonly seed: number;
  readonly command: string;
  /** Where the replicas keep their journals; absent: sqlite. */
  readonly store?: 'sqlite' | 'postgres';
  /** With `--store postgres`: the server's crash, or null when the run never reached it. */
  readonly storeCrash?: StoreCrash | null;
  /** With `--fleet N`: the members, the pause (null: the run never reached it), the owners at the end. */
  readonly fleet?: {
    readonly members: number;
    readonly leasePeriodMs: number;
    readonly pause: FleetPause | null;
    readonly ownership: readonly RuleOwnership[];
  };
  readonly dir: string;
  readonly total: number;
  readonly settled: boolean;
  readonly driveSeconds: number;
  readonly drainSeconds: number;
  readonly totalSeconds: number;
  readonly timeline: readonly TimelineEntry[];
  readonly driver: DriverStats;
  readonly faults: FaultStats;
  readonly bots: readonly BotSummary[];
  readonly ledger: LedgerVerdict;
  readonly stores: readonly StoreVerdict[];
  readonly badInput: BadInputResult;
  readonly badInputFailures: readonly string[];
};

type Check = { readonly what: string; readonly expected: string; readonly measured: string };

const n = (x: number): string => x.toLocaleString('en-US');
const few = (xs: readonly string[]): string =>
  xs.length === 0
    ? '0'
    : `${n(xs.length)} (${xs.slice(0, 5).join(', ')}${xs.length > 5 ? ', …' : ''})`;
const sum = (r: Readonly<Record<string, number>>): number =>
  Object.values(r).reduce((a, b) => a + b, 0);
const perCode = (r: Readonly<Record<string, number>>): string =>
  Object.entries(r)
    .map(([code, k]) => `${code} ${n(k)}`)
    .join(', ') || 'none';
const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** The correctness checks: each fails the run when `measured` is not `expected`. */
function checks(r: ChaosResult): { rows: Check[]; failures: string[] } {
  const rows: Check[] = [];
  const failures: string[] = [];
  const check = (what: string, expected: string, measured: string): void => {
    rows.push({ what, expected, measured });
    if (expected !== measured) failures.push(`${what}: expected ${expected}, measured ${measured}`);
  };
  const l = r.ledger;
  check('invoices on the ledger', n(r.total), n(l.invoices));
  check('Effects on the ledger', n(r.plan.events), n(l.effects));
  check('references with more than one Effect (duplicates)', '0', few(l.duplicates));
  check('expected references without an Effect (missing)', '0', few(l.missing));
  check('Effects the scenario refused for good', '0', few(l.unexpected));
  check('Effects closed (consuming exercise)', n(r.plan.events), n(l.closed));
  check('Effects left open (their Close never landed)', '0', few(l.unclosed));
  for (const s of r.stores) {
    const who = s.replica === 'fleet' ? "the fleet's journal" : `replica ${s.replica}`;
    check(`${who}: intents not terminal`, '0', few(s.open));
    check(`${who}: intents ending otherwise than designed`, '0', few(s.wrongEnd));
    check(`${who}: references with two intents`, '0', few(s.doubleIntents));
    check(
      `${who}: intents rejected though their command committed`,
      '0',
      few(s.rejectedButCommitted),
    );
    // The first replica, or the fleet's shared journal, sees every designed rejection.
    if (s.replica === 'a' || s.replica === 'fleet') {
      check(
        `${who}: designed rejections dead-lettered`,
        n(r.plan.rejected),
        n(r.plan.rejected - s.missingDeadLetters.length),
      );
    }
  }
  if (r.fleet !== undefined) {
    const p = r.fleet.pause;
    check(
      'a member owning rules paused past its lease (SIGSTOP), then SIGCONTed',
      'yes',
      p === null ? 'no' : 'yes',
    );
    if (p !== null) {
      check(
        `replica ${p.replica} after SIGCONT: says it lost its rules or was fenced`,
        'yes',
        p.fenced ? 'yes' : 'no',
      );
    }
    for (const o of r.fleet.ownership) {
      check(
        `rule ${o.ruleId} at the end: live members running it, and its lease's holder`,
        '1, the same',
        `${o.runners.length}${o.runners.length === 1 && o.leaseOwner === o.runners[0] ? ', the same' : ` (${o.runners.join('+') || 'none'}; lease: ${o.leaseOwner})`}`,
      );
    }
  }
  if (r.store === 'postgres' && r.fleet === undefined) {
    const crash = r.storeCrash ?? undefined;
    check('the PostgreSQL server crashed and came back', 'yes', crash === undefined ? 'no' : 'yes');
    for (const x of crash?.replicas ?? []) {
      check(
        `replica ${x.name}: running at the crash, stopped by itself (then restarted)`,
        'yes',
        x.stopped ? 'yes' : 'no (still running 30 s after the server was back)',
      );
    }
  }
  for (const b of r.bots) {
    if (b.processes === 0) continue;
    check(`replica ${b.name}: processes that died unasked`, '0', few(b.unexpectedExits));
    for (const e of b.outageExits ?? []) {
      const how =
        e.storeError === 'STORE_OPEN_FAILED'
          ? 'it was starting: STORE_OPEN_FAILED'
          : e.storeError === 'STORE_COMMIT_FAILED'
            ? 'a failed commit: STORE_COMMIT_FAILED'
            : 'no store error logged';
      check(
        `replica ${b.name}: ${e.process} stopped at the crash (${how}): exit code, a store error logged`,
        '1, yes',
        `${e.code ?? `signal ${e.signal}`}, ${e.storeError === undefined ? 'no' : 'yes'}`,
      );
    }
    check(`replica ${b.name}: exit code of the final SIGTERM`, '0', String(b.stopCode));
    // A fleet member runs only the rules it owns: the ownership checks above cover the edit.
    if (r.fleet === undefined) {
      check(
        `replica ${b.name}: runs the edited rule file at the end`,
        'yes',
        b.rulesAtEnd.includes(RELOADED_RULE_ID) ? 'yes' : 'no',
      );
    }
  }
  check('settled within the drain limit', 'yes', r.settled ? 'yes' : 'no');
  check(
    'bad inputs refused (exit 2, no secret, no store, ledger unchanged)',
    '0 problems',
    r.badInputFailures.length === 0 ? '0 problems' : few([...r.badInputFailures]),
  );
  return { rows, failures };
}

function faultRows(r: ChaosResult): string[] {
  const f = r.faults;
  const plan = r.plan.faults as {
    closeStreamsEveryMs: number;
    submitErrors: { code: string; rate: number }[];
    completionErrors: { code: string; rate: number }[];
    loseSubmitResponseRate: number;
    dropCompletionRate: number;
    completionDelayMs: [number, number];
    httpLatencyMs: [number, number];
  };
  const bots = r.bots.filter((b) => b.processes > 0);
  const total = (k: keyof BotCounters): number => bots.reduce((a, b) => a + b.counters[k], 0);
  const lostByDriver = r.driver.outcomes.get('lost or timed out') ?? 0;
  const survived = r.settled && r.ledger.duplicates.length === 0 && r.ledger.missing.length === 0;
  const ok = (injected: number): string => (survived ? n(injected) : '—');
  const rate = (rs: { code: string; rate: number }[]): string =>
    `${Math.round(rs.reduce((a, x) => a + x.rate, 0) * 100)}% (${rs.map((x) => `${x.code} ${x.rate * 100}%`).join(', ')})`;
  return [
    '| fault | setting | injected | what handled it | survived |',
    '|---|---|---:|---|---:|',
    `| update and completion streams dropped | every ${plan.closeStreamsEveryMs / 1000} s | ${n(f.droppedStreams)} | bot reconnects: updates ${n(total('reconnectsUpdates'))}, completions ${n(total('reconnectsCompletions'))} (resumed at the checkpoint) | ${ok(f.droppedStreams)} |`,
    `| synchronous transient errors | ${rate(plan.submitErrors)} of submissions | ${n(sum(f.submitErrors))} (${perCode(f.submitErrors)}) | retried with backoff under the same commandId (bot retries ${n(total('retries'))}, all causes) | ${ok(sum(f.submitErrors))} |`,
    `| asynchronous rejections in the completion | ${rate(plan.completionErrors)} | ${n(sum(f.completionErrors))} (${perCode(f.completionErrors)}) | contention re-checked (the invoice is still there), then retried | ${ok(sum(f.completionErrors))} |`,
    `| submit responses lost (connection cut after the command was processed) | ${plan.loseSubmitResponseRate * 100}% | ${n(f.lostSubmitResponses)} | resubmitted under the same commandId: a create the ledger deduplicates (DUPLICATE_COMMAND; bot intents ending \`duplicate\`: ${n(total('duplicate'))}, all causes); a consuming Close is interpreted first and refused as CONTRACT_NOT_FOUND, and the bot finds its own earlier commit (the archiving transaction carries its commandId) and settles it \`succeeded\` (${n(total('earlierCommits'))} so found) | ${ok(f.lostSubmitResponses)} |`,
    `| completions dropped (committed, never delivered on the open streams) | ${plan.dropCompletionRate * 100}% | ${n(f.droppedCompletions)} | completion timeout (2 s), resubmitted: deduplicated by the ledger (creates) or refused as CONTRACT_NOT_FOUND and found committed by its commandId (consuming Closes) | ${ok(f.droppedCompletions)} |`,
    `| submissions processed late | ${plan.completionDelayMs[0]}–${plan.completionDelayMs[1]} ms | ${n(f.delayedSubmissions)} | in flight meanwhile; completions matched by commandId | ${ok(f.delayedSubmissions)} |`,
    `| API requests delayed | ${plan.httpLatencyMs[0]}–${plan.httpLatencyMs[1]} ms | ${n(f.delayedRequests)} | — | ${ok(f.delayedRequests)} |`,
    `| bot processes SIGKILLed | ${r.plan.kills} at seeded points | ${n(r.timeline.filter((e) => e.what.startsWith('SIGKILL')).length)} | restart from the checkpoint; open intents resubmitted | ${ok(r.timeline.filter((e) => e.what.startsWith('SIGKILL')).length)} |`,
    ...(r.fleet === undefined
      ? []
      : [
          `| fleet member paused past its lease (SIGSTOP, then SIGCONT) | once at a seeded point, ${r.fleet.pause === null ? '—' : `${n(r.fleet.pause.pausedMs)} ms`} | ${r.fleet.pause === null ? 0 : 1} | the others take its rules when its leases run out (renewed every third of a lease period); woken up, it finds them lost by its own clock or has its commit fenced by the lease generation (\`STORE_FENCED\`), and runs what it owns now | ${ok(r.fleet.pause === null ? 0 : 1)} |`,
        ]),
    ...(r.store !== 'postgres' || r.fleet !== undefined
      ? []
      : [
          `| PostgreSQL server crashed (\`pg_ctl stop -m immediate\`) | once at a seeded point, back after 1–3 s | ${r.storeCrash === undefined || r.storeCrash === null ? 0 : `1 (${n(r.storeCrash.downMs)} ms)`} | each running replica fails its next commit (\`STORE_COMMIT_FAILED\`: memory undone to the last commit) and stops; the supervisor restarts it once the server is back, from the last committed checkpoint (commands already sent come back as duplicates) | ${ok(r.storeCrash === undefined || r.storeCrash === null ? 0 : 1)} |`,
        ]),
    '',
    `The driver (the issuer's own submit-and-wait client) met the same faults: ${n(lostByDriver)} of its attempts were lost or timed out and ${n(r.driver.retries)} were retried; the counts above include them. "Survived" is the injected count when the run ended with every expected Effect exactly once, "—" otherwise.`,
  ];
}

function storeRows(r: ChaosResult): string[] {
  const out = [
    '| replica | processes | intents | succeeded | duplicate | dead-lettered | pending | submitted | rejected | checkpoint | submissions | retries | reloads applied |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of r.stores) {
    const b = r.bots.find((x) => x.name === s.replica);
    const c = b?.counters;
    out.push(
      `| ${s.replica} | ${b?.processes ?? 0} | ${n(s.intents)} | ${n(s.states.succeeded)} | ${n(s.states.duplicate)} | ${n(s.states['dead-lettered'])} | ${n(s.states.pending)} | ${n(s.states.submitted)} | ${n(s.states.rejected)} | ${s.checkpoint ?? '—'} | ${c === undefined ? '—' : n(c.submissions)} | ${c === undefined ? '—' : n(c.retries)} | ${c === undefined ? '—' : n(c.reloadsApplied)} |`,
    );
  }
  out.push(
    '',
    'Submissions, retries and reloads are summed over the processes of a replica, each as of its last /metrics scrape (a SIGKILLed process loses up to a second of counts).',
  );
  return out;
}

function badInputRows(b: BadInputResult): string[] {
  const out = [
    '| input | what it is | exit code | error (as printed) | secret shown | store opened | ms |',
    '|---|---|---:|---|---|---|---:|',
  ];
  for (const c of b.cases) {
    const error = c.error.length > 300 ? `${c.error.slice(0, 300)}…` : c.error;
    out.push(
      `| ${cell(c.name)} | ${cell(c.source)} | ${c.exitCode ?? 'killed'} | ${cell(error)} | ${c.secretEchoed ? 'YES' : 'no'} | ${c.storeOpened ? 'YES' : 'no'} | ${Math.round(c.ms)} |`,
    );
  }
  out.push(
    '',
    `Each is \`node bin/ledgerbot.js run --config …\` against the live sandbox with \`start: begin\`, so a bot that accepted its input would have acted on the invoices already there. Ledger end before: ${b.ledgerEndBefore}, after: ${b.ledgerEndAfter} (${b.ledgerEndAfter === b.ledgerEndBefore ? 'nothing was submitted' : 'THE LEDGER MOVED'}).`,
  );
  return out;
}

/** The flags of `npm run chaos`; bench/chaos.ts's usage comment says the same. */
const HOW_TO_RUN: readonly string[] = [
  '`npm run chaos` builds dist/ and runs the scenario; it exits 1 when a check fails and then keeps its work directory (bot logs, configs, stores) for the post-mortem.',
  '',
  '- `-- --smoke`: the CI size (505 invoices, one SIGKILL, about 30 s); writes its record to the temp directory, not to docs/.',
  '- `--seed N`: another seed (invoice plan, kill points and victims, down times, the store crash). The record names its seed.',
  '- `--keep`: keep the work directory after a passing run too.',
  '- `--fleet N` (2 to 5; implies `--store postgres`, without the server crash): the replicas are members of one fleet on one schema (`fleet: { name, leasePeriod: 3s }`), the last joining halfway; the SIGKILLs hit members that own rules, and another owner is SIGSTOPped for 2.5 lease periods, then SIGCONTed (it must say it lost its rules or was fenced). At the end every rule must be run by exactly one live member, the one holding its lease. The full run writes docs/reliability-fleet.md, and its verdict at the end of this file.',
  "- `--store postgres`: each replica's journal in its own schema of a PostgreSQL the run starts (Debian's `postgresql` binaries under /usr/lib/postgresql, or `PG_BIN`; exits 1 without them), plus one crash of that server (`pg_ctl stop -m immediate`, back 1–3 s later) at a seeded point: every replica running then must stop by itself with a store error (its failed commit, or its failed open if it was starting), and the run, its replicas restarted, must end with every effect exactly once. The full run writes docs/reliability-postgres.md, and its verdict at the end of this file. Default `--store sqlite` (this file).",
];

export function renderReliability(r: ChaosResult): {
  text: string;
  failures: string[];
  checks: number;
} {
  const { rows, failures } = checks(r);
  const driverOutcomes = [...r.driver.outcomes].map(([k, v]) => `${k} ${n(v)}`).join(', ');
  const lines = [
    '# Reliability',
    '',
    `Produced by \`${r.command}\`${r.plan.name === 'full' ? ' (the full run; `npm run chaos -- --smoke` is the 30-second version CI runs, and writes its copy to the temp directory)' : ' (the CI smoke version)'}. ${machineLine()} seed ${r.seed}.`,
    '',
    '## The scenario',
    '',
    `- The sandbox (\`ledgerbot sandbox\`, its own process) with the invoices model and a \`chaos\` package whose \`Effect\` template refuses the currency ${'`XXX`'} (its \`ensure\`).`,
    `- The issuer creates ${n(r.total)} invoices in commands of 1 to 5 at ${r.plan.perSecond}/s: ${n(r.plan.events)} must each get exactly one \`Effect\`, ${r.plan.rejected} are in \`XXX\`, so their Effect is refused for good and must end as a dead letter.`,
    ...(r.fleet !== undefined
      ? [
          `- A fleet (\`--fleet ${r.fleet.members}\`): ${r.fleet.members} replicas are members of one fleet on one schema of a PostgreSQL the run starts (Debian's binaries, 127.0.0.1, \`fsync=off\`), \`fleet: { name: chaos, leasePeriod: ${r.fleet.leasePeriodMs}ms }\`: each rule is run by the member holding its lease; the last member joins halfway (a rebalance), the SIGKILLs hit members that own rules, and another owner is SIGSTOPped for 2.5 lease periods at a seeded point, then SIGCONTed (its leases are gone: it must say so and not write). At the end every rule (the reload's too) must be run by exactly one live member, the one holding its lease; the shared journal is checked once for the whole fleet.`,
        ]
      : r.store === 'postgres'
        ? [
            "- The journals on PostgreSQL (`--store postgres`): a server the run starts (Debian's binaries, 127.0.0.1, `fsync=off`), one database, each replica its own schema (`state.postgres`; its `state.dir` keeps only the caches). The server crashes once at a seeded point (`pg_ctl stop -m immediate`) and starts again 1–3 s later; a replica that stops on it is restarted by the scenario, as a supervisor would.",
          ]
        : []),
    '- The bot: `ledgerbot run` child processes (replica a from the start, replica b from halfway), each with its own state directory, the same rules (`chaos-effect`: on every Invoice, create an Effect with its reference; `chaos-close`: on every Effect, exercise its consuming `Close`, which leaves a `Closed`) and the same user, so the ledger deduplicates between them.',
    `- Faults on from the first invoice until everything has settled (below); ${r.plan.kills} SIGKILL(s) with a restart 0.5–3 s later, at seeded random points; the rule file edited halfway (a rule added: the watchers reload), then SIGHUP to replica a.`,
    "- The end: faults off, each replica stopped with SIGTERM, then the ledger's active contracts and each replica's journal (read-only) are compared with the plan.",
    '',
    `Durations: driving ${r.driveSeconds.toFixed(1)} s, settling ${r.drainSeconds.toFixed(1)} s, the whole run ${r.totalSeconds.toFixed(1)} s.`,
    '',
    '## Verdict',
    '',
    '| check | expected | measured | |',
    '|---|---:|---:|---|',
    ...rows.map(
      (c) =>
        `| ${cell(c.what)} | ${c.expected} | ${cell(c.measured)} | ${c.expected === c.measured ? 'ok' : '**FAIL**'} |`,
    ),
    '',
    failures.length === 0 ? '**Every check passed.**' : `**${failures.length} check(s) failed.**`,
    '',
    '## Faults injected and survived',
    '',
    "Injected counts are the sandbox's own (`GET /sandbox/fault-stats`), over every client.",
    '',
    ...faultRows(r),
    '',
    "## The replicas' journals",
    '',
    ...storeRows(r),
    '',
    `The driver: ${n(r.driver.commands)} commands landed; attempt outcomes: ${driverOutcomes}.`,
    '',
    '## Timeline',
    '',
    '| t (s) | event |',
    '|---:|---|',
    ...r.timeline.map((e) => `| ${e.t.toFixed(1)} | ${cell(e.what)} |`),
    '',
    '## How to run',
    '',
    ...HOW_TO_RUN,
    '',
    '## Bad input',
    '',
    'The hostile rule files of `test/fixtures/rules/hostile/` and hostile bot configs (the cases of `test/runtime/config/load-bot-config.test.ts`, as files), each run as the daemon. Each must exit 2 with a located error, show no secret, open no store (no `ledgerbot.sqlite` in its state directory; the package cache the rule check may fill from the participant is not the store) and submit nothing.',
    '',
    ...badInputRows(r.badInput),
    '',
  ];
  return { text: lines.join('\n'), failures, checks: rows.length };
}
