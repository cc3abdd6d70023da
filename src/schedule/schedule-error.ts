import { LedgerbotError } from '../core/ledgerbot-error.js';

export type ScheduleErrorCode =
  /** `runSlot` was given a rule that is not a schedule rule. */
  | 'NOT_A_SCHEDULE_RULE'
  /** The rule's `forEach.party` alias has no party id in the bot config. */
  | 'UNKNOWN_PARTY';

/** A slot that cannot run for a reason a retry will not fix. */
export class ScheduleError extends LedgerbotError<ScheduleErrorCode> {}
