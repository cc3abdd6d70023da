import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old space of `ledgerbot run` grow past the live heap before the next full
 * GC: 50% (a growing factor of 1.5). V8's own factor goes up to 4 when the process allocates fast,
 * which the bot does (every event is parsed and evaluated, almost all of it garbage at once): with
 * a live heap of about 30 MB the old space grew to 100–140 MB between full GCs, and RSS with it
 * (`npm run bench -- --only memory`). At 1.5 it stays near 60 MB, for more full GCs of that small
 * heap (each mostly concurrent). The factor is relative, so a bot with a bigger live heap (many
 * rules, many intents in flight) still gets room; it sets no limit a heap could run into.
 */
export const RUN_HEAP_GROWING_PERCENT = 50;

/** Whether node's own arguments choose the heap growth (`node --heap-growing-percent=N …`). */
export function heapGrowthChosen(execArgv: readonly string[]): boolean {
  return execArgv.some((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a));
}

/**
 * Sets the heap growing factor of the `run` daemon, unless node was started with one; returns the
 * flag it set. V8 reads it whenever it sizes the heap after a GC, so `run` sets it once the bot
 * runs: during start-up V8's own factor lets the heap grow with fewer full GCs while the rules
 * compile (1,000 rules, 7 alternating starts, 2026-11-26: warm start 757 → 711 ms, CPU 1,110 →
 * 1,000 ms; cold 1,213 → 1,192 ms).
 */
export function limitHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  setFlags: (flags: string) => void = setFlagsFromString,
): string | undefined {
  if (heapGrowthChosen(execArgv)) return undefined;
  const flag = `--heap-growing-percent=${RUN_HEAP_GROWING_PERCENT}`;
  setFlags(flag);
  return flag;
}
