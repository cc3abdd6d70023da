import type { Logger } from '../core/logger.js';
import type { RuleSet } from '../rules/compiled-rule.js';
import type { BotEvents, BotState } from './bot-events.js';
import type { BotMetrics } from './bot-metrics.js';
import type { SwappableSchedules } from './bot-schedules.js';
import type { Checkpoint } from './checkpoint.js';
import type { CompletionFollower } from './completion-follower.js';
import type { RuleBook } from './rule-book.js';
import {
  diffRuleSets,
  isEmptyDiff,
  lazyRuleSetDiff,
  ruleContentHash,
  type RuleSetDiff,
} from './rule-set-diff.js';
import { RuntimeError } from './runtime-error.js';
import type { RateLimits } from './token-bucket.js';
import type { UpdateFollower } from './update-follower.js';

export type RuleReloadDeps = {
  readonly book: RuleBook;
  readonly state: () => BotState;
  readonly checkpoint: Checkpoint;
  readonly updates: Pick<UpdateFollower, 'resubscribe'>;
  /** Undefined for a shadow bot (it follows no completions). */
  readonly completions: Pick<CompletionFollower, 'widen'> | undefined;
  readonly schedules: Pick<SwappableSchedules, 'swap'>;
  readonly rateLimits: Pick<RateLimits, 'forget'>;
  readonly metrics: BotMetrics;
  readonly logger: Logger;
  readonly events: BotEvents;
};

/**
 * Swaps the rules between two events (see `Bot.reloadRules`): the rule book first (which
 * refuses an unknown party before anything changes), then what follows from it while the bot
 * runs: a changed filter resubscribes, new acting parties reopen the completions, changed
 * schedule rules swap the driver. Rate limits of changed and removed rules start afresh.
 * Before the bot starts, the rules are replaced without counting or announcing a reload.
 */
export function reloadRules(ruleSet: RuleSet, d: RuleReloadDeps): RuleSetDiff {
  const state = d.state();
  if (state === 'stopping' || state === 'stopped' || state === 'failed') {
    throw new RuntimeError('NOT_RUNNING', `the bot is ${state}; it cannot take new rules`);
  }
  const before = d.book.rules;
  const beforeFormat = JSON.stringify(d.book.plan.updateFormat);
  d.book.swap(ruleSet);
  if (state === 'created') {
    // Not started: these are the rules it starts with, not a reload (`run` checks its rules
    // again once the participant answers, against its packages, and hands them over here,
    // ignoring the diff: it is made only if read).
    if (schedulesDiffer(before, ruleSet)) d.schedules.swap(ruleSet);
    d.logger.debug({ rules: ruleSet.rules.length }, 'rules replaced before start');
    return lazyRuleSetDiff(before, ruleSet);
  }
  const diff = diffRuleSets(before, ruleSet);
  d.rateLimits.forget([...diff.changed, ...diff.removed].map((v) => v.id));
  d.metrics.reloads.applied += 1;
  const offset = d.checkpoint.evaluatedThrough;
  d.logger.info(
    {
      added: diff.added.map(describeVersion),
      removed: diff.removed.map(describeVersion),
      changed: diff.changed.map(describeVersion),
      unchanged: diff.unchanged,
      offset,
    },
    isEmptyDiff(diff) ? 'rules reloaded: no change' : 'rules reloaded',
  );
  const plan = d.book.plan;
  if (state === 'running' || state === 'starting') {
    if (beforeFormat !== JSON.stringify(plan.updateFormat)) {
      d.logger.info(
        { offset, readParties: plan.readParties, shape: plan.shape },
        'subscription filter changed; resubscribing',
      );
      d.updates.resubscribe();
    }
    d.completions?.widen(plan.actAsParties);
  }
  if (schedulesDiffer(before, ruleSet)) d.schedules.swap(ruleSet);
  d.events.emit('reload', diff);
  return diff;
}

function describeVersion(v: { id: string; revision: number; hash: string }): string {
  return `${v.id}@${v.revision}#${v.hash}`;
}

function schedulesDiffer(a: RuleSet, b: RuleSet): boolean {
  const key = (set: RuleSet): string =>
    set.rules
      .filter((r) => r.enabled && r.trigger.kind === 'schedule')
      .map((r) => `${r.id}#${ruleContentHash(r)}`)
      .sort()
      .join(',');
  return key(a) !== key(b);
}
