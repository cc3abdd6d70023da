import { LedgerbotError } from '../../core/ledgerbot-error.js';
import type { CompiledRule } from '../../rules/compiled-rule.js';
import { formatRuleEvaluationError } from '../../rules/evaluation-result.js';
import { runSlot, type SlotIntentSink, type SlotJournal } from '../../schedule/run-slot.js';
import { previousSlot } from '../../schedule/slots-between.js';
import type { Bot } from '../bot.js';
import { slotIntentView, type SlotIntentView } from '../intent-view.js';
import { ledgerSlotSource, type SlotLedger } from '../ledger-slot-source.js';
import { RuntimeError } from '../runtime-error.js';

/** At most this many intents are listed in an answer (all are counted). */
export const LISTED_INTENTS = 1000;

/** One slot run by hand in the running bot (`POST /rules/{id}/run-slot`). */
export type ManualSlotOutcome = {
  readonly ruleId: string;
  /** The slot time, epoch ms. */
  readonly slot: number;
  readonly snapshotOffset: number;
  readonly resumed: boolean;
  readonly contracts: number;
  /** Intents handed to the bot's pipeline. */
  readonly intentCount: number;
  /** The first LISTED_INTENTS of them. */
  readonly intents: readonly ManualSlotIntent[];
  readonly errorCount: number;
  readonly errors: readonly string[];
};

export type ManualSlotIntent = SlotIntentView;

/** Why a slot cannot be run: `status` is the HTTP status the ops API answers with. */
export class SlotRequestError extends LedgerbotError {
  readonly status: 400 | 409;
  /** Refused for now only: a slot of the rule is being run (asking again later works). */
  readonly busy: boolean;

  constructor(status: 400 | 409, message: string, busy = false) {
    super(status === 400 ? 'BAD_REQUEST' : 'CONFLICT', message);
    this.status = status;
    this.busy = busy;
  }
}

/**
 * The slot of a schedule rule that a run asked for `at` runs: the latest at or before `at`, as
 * the schedule driver runs it. Throws SlotRequestError 409 for an event rule, or when the rule
 * has no slot before `at`.
 */
export function slotToRun(rule: CompiledRule, at: number): number {
  const trigger = rule.trigger;
  if (trigger.kind !== 'schedule') {
    throw new SlotRequestError(409, `rule "${rule.id}" is an event rule, not a schedule rule`);
  }
  const slot = previousSlot(trigger.cronSpec, trigger.timezone, at);
  if (slot === undefined) {
    throw new SlotRequestError(
      409,
      `rule "${rule.id}" (${trigger.cron}) has no slot before ${new Date(at).toISOString()}`,
    );
  }
  return slot;
}

export type ManualSlotDeps = {
  readonly bot: Bot;
  readonly ledger: SlotLedger;
  readonly parties: Readonly<Record<string, string>>;
  /** See BotOptions.packageNameOf (the bot's). */
  readonly packageNameOf?: (packageId: string) => string | undefined;
  /** The bot's store: the slot is marked begun and completed there, as the driver does. */
  readonly journal: SlotJournal;
};

/**
 * `ledgerbot run-slot` while the bot runs: the bot that holds the store runs the slot itself,
 * with its own rules (the ones in effect, reloads included) and its submission pipeline, so the
 * store keeps one writer. The latest slot at or before `at` is run, as by the schedule driver.
 * Refused while the driver is running a slot of the same rule (they would share its slot record),
 * or while another manual run of the rule is under way.
 */
export function manualSlotRunner(
  deps: ManualSlotDeps,
): (ruleId: string, at: number) => Promise<ManualSlotOutcome> {
  const running = new Set<string>();
  return async (ruleId, at) => {
    const { bot } = deps;
    if (bot.shadow) {
      throw new RuntimeError(
        'SHADOW',
        'a shadow bot submits nothing and writes nothing: use run-slot --dry-run',
      );
    }
    if (bot.state !== 'running') {
      throw new RuntimeError('NOT_RUNNING', `the bot is ${bot.state}`);
    }
    const rule = bot.rules.rules.find((r) => r.id === ruleId);
    if (rule === undefined) throw new RuntimeError('UNKNOWN_RULE', `no rule with id "${ruleId}"`);
    const slot = slotToRun(rule, at);
    const driving = bot.schedules?.stats().find((s) => s.ruleId === ruleId)?.running === true;
    if (driving || running.has(ruleId)) {
      throw new SlotRequestError(
        409,
        `a slot of rule "${ruleId}" is being run right now; try again when it is done`,
        true,
      );
    }
    running.add(ruleId);
    try {
      const listed: ManualSlotIntent[] = [];
      const sink: SlotIntentSink = {
        submitIntents: async (intents, context) => {
          for (const i of intents) {
            if (listed.length >= LISTED_INTENTS) break;
            listed.push(slotIntentView(i));
          }
          await bot.submitIntents(intents, context);
        },
      };
      const result = await runSlot(rule, slot, {
        source: ledgerSlotSource(deps.ledger),
        sink,
        journal: deps.journal,
        parties: deps.parties,
        ...(deps.packageNameOf === undefined ? {} : { packageNameOf: deps.packageNameOf }),
      });
      return {
        ruleId,
        slot,
        snapshotOffset: result.snapshotOffset,
        resumed: result.resumed,
        contracts: result.contracts,
        intentCount: result.intents,
        intents: listed,
        errorCount: result.errorCount,
        errors: result.errors.map(formatRuleEvaluationError),
      };
    } finally {
      running.delete(ruleId);
    }
  };
}
