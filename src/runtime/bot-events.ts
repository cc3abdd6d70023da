import type { EventEmitter } from 'node:events';
import type { Intent } from '../rules/evaluation-result.js';
import type { RuleSetDiff } from './rule-set-diff.js';
import type { IntentEvent } from './submission-tracker.js';

export type BotState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

/** What the bot emits, for the demo's account, the ops layer and tests. */
export type BotEventMap = {
  state: [state: BotState, previous: BotState];
  intent: [event: IntentEvent];
  /** An element of the updates stream was processed (its intents recorded). */
  offset: [offset: number];
  'rule-error': [error: { ruleId: string; updateId: string; offset: number; message: string }];
  /** Shadow mode: an intent that would have been submitted. */
  'shadow-intent': [intent: Intent];
  /** The rules were swapped (`reloadRules`). */
  reload: [diff: RuleSetDiff];
  /** A paused rule caught up with the events of its pause and is active again. */
  resumed: [ruleId: string];
};

export type BotEvents = EventEmitter<BotEventMap>;
