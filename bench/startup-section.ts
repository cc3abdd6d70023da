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
const STARTUP_MISSED: readonly string[] = [
  'Reading: a warm start takes unchanged rule files from `state.dir/rule-cache.json` (their checked value and the',
  'positions of their YAML nodes), so it neither parses YAML nor runs the schema; the schema validators are generated',
  'at build time (ajv standalone code, no `ajv.compile` at start), and `run` loads only its own modules (about 360 ES',
  'modules, 530 before: the other commands, the sandbox, its model loader and pino-pretty load when used). Against a',
  "participant the rules are loaded twice: against the config's packages before the participant is reached (a rule",
  "mistake exits 2 before anything starts), then with the participant's packages (`src/cli/compose/start-bot.ts`);",
  'the second load takes the checked files, their restored YAML positions and the CEL programs of the first and',
  "only compiles the rules again against the participant's types (each read path walked once per rule); the rules",
  'handed to the bot before it starts are not diffed (hashing both sets was about 4% of the warm profile). When',
  '`state.dir/rule-check.json` records that the same inputs (rule files, parties, packages, models, version) passed',
  'the first load before, a start skips it; that saved only 75–280 ms in scratch A/B runs, because the skipped load',
  'also used to fill the CEL program cache the second load takes its programs from. What is',
  'left is that compiling (cel-js parsing and checking each expression once, the rule compiler twice:',
  '`compileAction`, read paths, Daml types), the garbage collector, module loading (all of undici, about 80 ms:',
  "its index adds the request API to every dispatcher, so the client's Agent cannot be loaded without it) and",
  "decoding the participant's cached packages (protobuf).",
  'What would fix it: keep the compiled form of each rule in the cache (its checked CEL ASTs and compiled values,',
  'keyed by the files, parties and package ids, rebuilt into programs without parsing or checking), and compile',
  'once at a start against a participant when the config names no packages.',
];
