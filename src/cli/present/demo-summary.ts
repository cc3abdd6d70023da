import { formatDuration } from '../../core/duration.js';
import { INTENT_STATES, type IntentState } from '../../store/store.js';
import type { EffectsVerdict } from '../commands/demo-report.js';
import type { Colour } from './colour.js';

/** An intent state in its colour: finished ones green, failed ones red, open ones yellow. */
export function paintState(state: IntentState, text: string, c: Colour): string {
  switch (state) {
    case 'succeeded':
    case 'duplicate':
      return c.green(text);
    case 'rejected':
    case 'dead-lettered':
      return c.red(text);
    default:
      return c.yellow(text);
  }
}

export type DemoSummaryInput = {
  readonly elapsedMs: number;
  readonly eventsSeen: number;
  readonly transactionsSeen: number;
  readonly ruleErrors: number;
  readonly states: Record<IntentState, number> | undefined;
  readonly outcomesByRule: ReadonlyMap<string, ReadonlyMap<IntentState, number>>;
  readonly caughtUp: boolean;
  readonly verdict: EffectsVerdict;
  readonly invoices: number;
  readonly logPath: string;
  readonly failed: unknown;
  readonly colour: Colour;
};

/** The demo's closing account: what each rule did and whether the ledger shows it. */
export function demoSummary(s: DemoSummaryInput): string {
  const states =
    s.states === undefined
      ? 'unknown (the store could not be read)'
      : INTENT_STATES.map((k) =>
          s.states![k] === 0 ? `${k} 0` : paintState(k, `${k} ${s.states![k]}`, s.colour),
        ).join(', ');
  return [
    '',
    `Summary after ${formatDuration(Math.round(s.elapsedMs / 1000) * 1000)}`,
    `  invoices issued   ${s.invoices}`,
    `  events seen       ${s.eventsSeen} in ${s.transactionsSeen} transactions (${s.ruleErrors} rule errors)`,
    `  intents           ${states}`,
    ...[...s.outcomesByRule].map(
      ([rule, byState]) =>
        `    ${rule.padEnd(26)} ${[...byState].map(([state, n]) => paintState(state, `${n} ${state}`, s.colour)).join(', ')}`,
    ),
    `  ledger effects    ${s.verdict.ok ? s.colour.green('verified') : s.colour.red('NOT as expected')} (active contracts read from the ledger):`,
    ...s.verdict.lines.map((l) => `    ${l}`),
    ...(s.caughtUp ? [] : ['  (the bot had not caught up with the ledger when the demo stopped)']),
    ...(s.failed === undefined
      ? []
      : [`  the bot failed: ${s.failed instanceof Error ? s.failed.message : 'see the log'}`]),
    `  log               ${s.logPath}`,
    '',
  ].join('\n');
}
