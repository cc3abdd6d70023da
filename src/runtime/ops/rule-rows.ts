import type { Clock } from '../../core/clock.js';
import type { CompiledRule } from '../../rules/compiled-rule.js';
import { nextSlots } from '../../schedule/slots-between.js';
import type { Bot } from '../bot.js';
import type { IntentEvent } from '../in-flight-intents.js';
import { iso } from './ops-http.js';

/** One rule as `GET /rules` and the `rules` event show it (docs/operations-api.md). */
export type RuleRow = {
  readonly id: string;
  readonly description: string | null;
  readonly trigger: 'created' | 'exercised' | 'archived' | 'schedule';
  /** The template or interface as written in the rule (the schedule's forEach one). */
  readonly template: string | null;
  readonly choice: string | null;
  readonly cron: string | null;
  readonly timezone: string | null;
  readonly nextSlot: string | null;
  readonly state: 'active' | 'paused' | 'resuming' | 'disabled';
  readonly pausedAt?: string;
  readonly pausedAtOffset?: number;
  /** Since this process started. */
  readonly counts: {
    readonly fired: number;
    readonly succeeded: number;
    readonly failed: number;
    readonly deadLettered: number;
  };
  readonly lastFiredAt: string | null;
  readonly file: string;
  readonly line: number;
  readonly revision: number;
  readonly hash: string;
};

export type RuleRows = {
  /** Every rule of the bot, in file order. */
  rows(): RuleRow[];
  /** Stops observing the bot. */
  close(): void;
};

/**
 * The rules table of the console: the bot's rule status, its counters, and when each rule last
 * fired (an intent newly recorded), which this observes from the bot's intent events.
 */
export function ruleRows(bot: Bot, clock: Clock): RuleRows {
  const lastFired = new Map<string, number>();
  const onIntent = (e: IntentEvent): void => {
    if (e.from === null) lastFired.set(e.ruleId, clock.now());
  };
  bot.events.on('intent', onIntent);
  return {
    rows: () => {
      const compiled = new Map(bot.rules.rules.map((r) => [r.id, r]));
      const counters = bot.metrics.snapshot().rules;
      const now = clock.now();
      return bot.ruleStatus().map((s) => {
        const rule = compiled.get(s.id);
        const c = counters[s.id];
        const fired = lastFired.get(s.id);
        return {
          id: s.id,
          description: rule === undefined || rule.description === '' ? null : rule.description,
          trigger: s.trigger,
          ...triggerColumns(rule, now),
          state: s.state,
          ...(s.pausedAt === undefined ? {} : { pausedAt: iso(s.pausedAt) }),
          ...(s.pausedAtOffset === undefined ? {} : { pausedAtOffset: s.pausedAtOffset }),
          counts: {
            fired: c?.recorded ?? 0,
            succeeded: (c?.transitions.succeeded ?? 0) + (c?.transitions.duplicate ?? 0),
            failed: c?.transitions.rejected ?? 0,
            deadLettered: c?.transitions['dead-lettered'] ?? 0,
          },
          lastFiredAt: fired === undefined ? null : iso(fired),
          file: s.file,
          line: s.line,
          revision: s.revision,
          hash: s.hash,
        };
      });
    },
    close: () => {
      bot.events.off('intent', onIntent);
    },
  };
}

type TriggerColumns = Pick<RuleRow, 'template' | 'choice' | 'cron' | 'timezone' | 'nextSlot'>;

function triggerColumns(rule: CompiledRule | undefined, now: number): TriggerColumns {
  const none = { template: null, choice: null, cron: null, timezone: null, nextSlot: null };
  if (rule === undefined) return none;
  const t = rule.trigger;
  switch (t.kind) {
    case 'created':
    case 'archived':
      return { ...none, template: t.template.text };
    case 'exercised':
      return { ...none, template: t.template.text, choice: t.choice };
    case 'schedule': {
      const next = rule.enabled ? nextSlots(t.cronSpec, t.timezone, now, 1)[0] : undefined;
      return {
        ...none,
        template: t.forEach?.template.text ?? null,
        cron: t.cron,
        timezone: t.timezone,
        nextSlot: next === undefined ? null : iso(next),
      };
    }
  }
}
