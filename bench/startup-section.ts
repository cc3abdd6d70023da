import { benchSection } from './bench-support.js';
import type { StartupResult } from './startup-bench.js';
import {
  header,
  int,
  median,
  profileBlock,
  verdict,
  whereTimeGoes,
  type SectionContext,
} from './section-text.js';

/** The docs/benchmarks.md text of the start-up section. */
export function startupSection(r: StartupResult, c: SectionContext): string {
  const ready = median(r.readyMs);
  const warm = median(r.warmReadyMs);
  const floor = median(r.floorMs);
  const met = ready < 1200 && warm < 500;
  return benchSection('startup', [
    ...header('Start-up', c, 'startup', '`bench/startup-bench.ts`'),
    '',
    `From spawning \`node bin/ledgerbot.js run --config …\` with ${int(r.rules)} rules (ten generated files of 100 bench`,
    'rules, each file with its own conditions) against the sandbox (own process, empty ledger, `start: ledger-end`)',
    'until GET /readyz answers 200 (bot running, updates stream connected, within `readyMaxLag` of the ledger end),',
    'polled every 5 ms once the ops server logged its address. Cold: a fresh state directory per run (no rule cache,',
    'no package cache). Warm: one state directory, filled by an untimed first start, reused by every warm run (its',
    '`compiled-rules.json` and package cache are hit: the rules are taken as compiled, not',
    'compiled). "bot starting": the bot\'s log line after the',
    'rules are loaded and the store is open. CPU time: user + system time of the bot process when /readyz answered',
    '(from /proc, 10 ms ticks), which other work on the machine disturbs less than the wall time the targets are',
    'stated in. Floor: spawning `node -e 0` until it exits. Each run is a floor, a cold start and a warm start, in turn.',
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
    ...nearTheLine([
      ['warm', warm, 500],
      ['cold', ready, 1200],
    ]),
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
          'Profile of one more warm start (`node --cpu-prof`, untimed, from the spawn until the bot exited on the SIGTERM sent once /readyz answered 200)',
          r.warmProfile.areas,
          r.warmProfile.top,
        )),
    ...(r.profile === undefined
      ? []
      : profileBlock(
          'Profile of one more cold start (`node --cpu-prof`, untimed, from the spawn until the bot exited on the SIGTERM sent once /readyz answered 200: that stop writes the compiled rules, so `encodeRuleSet` and what it calls in `compiled-rule-codec.ts` come after /readyz)',
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
const STARTUP_MISSED: readonly string[] = [
  'Reading: `run` starts from one esbuild bundle of its modules (`dist/run/`, written by `npm run build` after tsc;',
  '`scripts/bundle-run.mjs`). A warm start takes the rule set as it was last compiled from',
  '`state.dir/compiled-rules.json` (`src/cli/compose/compiled-rules-file.ts`, `src/rules/compiled-rule-codec.ts`):',
  "the key of its inputs (rule files, parties, `submission.retry`, the participant's package ids, models, version)",
  'matches, so it neither reads YAML nor runs the schema, parses or checks CEL, or compiles a rule; each of the 950',
  'distinct CEL texts is restored from its stored facts and closure form, its closures made at its first evaluation',
  "and cel-js compiling its text only when a value leaves the closures' subset (action values, errors). What is left,",
  'warm: reading, hashing and decoding that file (1.9 MB of JSON, repeated template references, options and such',
  'written once; the garbage collector then scavenges what it made), checking its shape, loading the bundle (undici is',
  "its largest package), building the rule index, and reading the participant's packages. Cold: parsing and",
  'schema-checking the YAML (the `yaml` package: about 0.6 s for these 480 KB in a fresh process, 0.25 s once its',
  "code is optimised) and compiling the rules once, against the participant's packages, which answered at once (the",
  "check against the config's packages alone runs only when it does not: `src/cli/compose/first-rule-check.ts`);",
  'the compiled set is written at the stop (or 5 minutes after the start), not while the start waits.',
  'Tried, not kept (2026-11-27, A/B against the same build, 6 cold starts each, alternated): checking the YAML files',
  'in a worker thread while the main thread compiles the ones checked (each file taken once, by an atomic flag): ready',
  "1,255 vs 1,103 ms, CPU 2,070 vs 1,680 ms. On two cores the thread took the core V8's compiler and collector threads",
  'use, and compiling on the main thread went from 21% to 35% of the profile. A larger young generation',
  '(`--max-semi-space-size=64`): 11 scavenges instead of 39, 125 instead of 150 ms of collection, within the noise of the',
  'start; a minified bundle: within the noise.',
  'What would fix it: a smaller compiled form still (positions as numbers, the closure forms of the programs),',
  'which is less to parse and to collect; a faster YAML reader that still gives every node its position.',
];

/**
 * A note for each median within 15% of its target: on this machine the starts (and the node
 * floor with them) have moved by about 30% within an hour, so such a verdict is this run's.
 */
function nearTheLine(rows: readonly (readonly [string, number, number])[]): string[] {
  const near = rows.filter(([, median, target]) => Math.abs(median - target) < 0.15 * target);
  if (near.length === 0) return [];
  const which = near.map(
    ([name, median, target]) => `${name} ${int(median)} against ${int(target)} ms`,
  );
  return [
    `Close to the line (${which.join('; ')}): on this machine the starts, and the node floor with them, have moved by`,
    "about 30% within an hour with nothing else running, so this verdict is this run's; a slower hour can turn it.",
  ];
}
