import { LedgerbotError } from '../core/ledgerbot-error.js';

export type RuntimeErrorCode =
  /** The rules need no subscription and no submission: nothing to run. */
  | 'NO_RULES'
  /** A rule names a party alias that has no party id. */
  | 'UNKNOWN_PARTY'
  /** The updates or completions stream failed in a way retrying cannot fix. */
  | 'STREAM_FAILED'
  /** An intent waited for a completion past `completionTimeout` (recorded as its last error). */
  | 'COMPLETION_TIMEOUT'
  /** An intent ran out of attempts or time (recorded in its dead letter). */
  | 'RETRIES_EXHAUSTED'
  /** An ops action named a rule id the bot does not have. */
  | 'UNKNOWN_RULE'
  /** An ops action on a rule with `enabled: false` (enable it in its file and reload). */
  | 'RULE_DISABLED'
  /** Pausing a rule whose paused events are still being evaluated; try again shortly. */
  | 'RULE_RESUMING'
  /** An ops action that needs a running bot. */
  | 'NOT_RUNNING'
  /** A dead-letter retry of a commandId that is not dead-lettered. */
  | 'NOT_DEAD_LETTERED'
  /** An action a shadow bot does not take (it submits nothing). */
  | 'SHADOW'
  /** The updates stream was refused as pruned, but the participant reports no such pruning. */
  | 'PRUNING_OFFSET_UNCLEAR'
  /** At start, the participant did not answer within `ledger.startTimeout`. */
  | 'PARTICIPANT_UNREACHABLE'
  /** At start, the participant refused the bot in a way retrying cannot fix (auth, wrong URL). */
  | 'PARTICIPANT_REFUSED'
  /** At start, the participant has no user `ledger.userId`. */
  | 'UNKNOWN_USER'
  /** The participant's packages could not be listed or downloaded (the ledger error is the cause). */
  | 'PACKAGES_UNREADABLE'
  /** At start without a checkpoint, `start:` names an offset beyond the ledger end. */
  | 'START_BEYOND_LEDGER_END'
  /** The ops API could not listen on `http.host`:`http.port` (in use, not allowed). */
  | 'OPS_LISTEN_FAILED'
  | 'CHECKPOINT_BEYOND_LEDGER_END';

/** A failure of the trigger runtime itself (not of one ledger call). */
export class RuntimeError extends LedgerbotError<RuntimeErrorCode> {}
