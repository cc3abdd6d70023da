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
    '`rule-cache.json`, `rule-check.json` and package cache are hit). "bot starting": the bot\'s log line after the',
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
const STARTUP_MISSED: readonly string[] = [
  'Reading: `run` starts from one esbuild bundle of its modules (`dist/run/`, written by `npm run build` after tsc;',
  '`scripts/bundle-run.mjs`), which halved the CPU time of loading them (about 0.5 s to 0.23 s alone, in scratch runs);',
  'a warm start takes unchanged rule files from `state.dir/rule-cache.json` (their checked value and the positions of',
  'their YAML nodes), so it neither parses YAML nor runs the schema (the validators are ajv standalone code generated',
  'at build time), and when `state.dir/rule-check.json` records that the same inputs passed the offline check, it',
  "skips that check and compiles the rules once, against the participant's packages. A load compiles each distinct",
  'CEL text once and the rules that write it share the program (these 1,000 rules ask for 3,500 programs of 950',
  'texts, most repeats interpolations such as `event.contractId`), and the rules of one trigger share the walks of',
  'the fields they read through the Daml types. At a cold start the second load (against the participant) takes',
  "the first load's checked files, CEL programs and parsed YAML positions (it used to restore the positions from",
  'the snapshot just written to the cache), so it only compiles the rules again. What is left, warm: compiling',
  "every rule (cel-js parsing and checking each distinct expression, the rule compiler's checks against the Daml",
  'types: command arguments, field paths, positions in the YAML), the garbage collector, loading the bundle',
  '(undici is its largest package)',
  "and decoding the participant's cached packages; cold, also parsing and schema-checking the YAML and compiling",
  "the rules a second time, against the config's packages, before the participant is reached.",
  'What would fix it: keep the compiled form of each rule in the state directory (its compiled values and the texts',
  'of its programs, keyed by the files, parties, package ids and version, rebuilt without the checks), and compile',
  'once at a cold start against a participant when the config names no packages.',
];
