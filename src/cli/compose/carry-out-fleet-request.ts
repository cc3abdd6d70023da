import type { Logger } from '../../core/logger.js';
import { RuntimeError } from '../../runtime/runtime-error.js';
import { SlotRequestError, slotToRun } from '../../runtime/ops/manual-slot.js';
import type { ClaimedRequest } from '../../store/pg/fleet-requests.js';
import type { RunningBot } from './start-bot.js';

/** Refusals that pass: the same request carried out a little later succeeds. */
const TRY_LATER = new Set(['NOT_RUNNING', 'RULE_RESUMING']);

/**
 * Carries out an operator's fleet request (posted by any member) on the bot running its rule,
 * and resolves once its effect is durable: true when the request is done with (carried out, a
 * no-op, or refused for good, each logged), false when it should be tried again (the bot is not
 * running, or its store did not commit the effect). Requests are delivered at least once, so
 * each effect is idempotent: a retry of an intent that is no longer dead-lettered, or the drop
 * of a dead letter that is not there, did its work before and is a no-op (logged at info).
 *
 * A retry's requeue and a drop's purge are durable once the store commits them (`sync`); a
 * pause or resume is the running bot's state plus `lb_fleet_rule_control` (written when the
 * operator asked), so it is done once applied. A slot run (`run-slot`) goes through the bot's
 * manual-slot runner, as on the member asked, and is durable once its intents and its slot
 * record are committed; claimed `again`, a slot the rule's record shows as its last completed is
 * not run a second time (run again, it would read a newer snapshot of the contracts).
 */
export async function carryOutFleetRequest(
  target: Pick<RunningBot, 'bot' | 'store' | 'runSlot'>,
  claimed: Pick<ClaimedRequest, 'request' | 'again'>,
  log: Logger,
): Promise<boolean> {
  const { bot, store } = target;
  const { request } = claimed;
  try {
    if (request.kind === 'retry') {
      if (store.getDeadLetter(request.commandId) === undefined) {
        log.info({ ...request }, 'fleet request already carried out: no such dead letter');
        return true;
      }
      bot.retryDeadLetter(request.commandId);
      await store.sync();
    } else if (request.kind === 'drop') {
      if (!store.purgeDeadLetter(request.commandId)) {
        log.info({ ...request }, 'fleet request already carried out: no such dead letter');
        return true;
      }
      await store.sync();
    } else if (request.kind === 'run-slot') {
      const rule = bot.rules.rules.find((r) => r.id === request.ruleId);
      const slot = rule === undefined ? undefined : slotToRun(rule, request.at);
      const completed = store.getSlotRecord(request.ruleId)?.lastCompletedSlot;
      // That very slot: the record keeps only the latest completed, so an older slot asked for
      // is run again (the same commandIds; it may also act on contracts that came since).
      if (claimed.again && slot !== undefined && completed === slot) {
        log.info(
          { ...request, slot: new Date(slot).toISOString() },
          'fleet request already carried out: the slot is completed',
        );
        return true;
      }
      const outcome = await target.runSlot(request.ruleId, request.at);
      await store.sync();
      log.info(
        { ...request, slot: new Date(outcome.slot).toISOString(), intents: outcome.intentCount },
        'fleet request carried out',
      );
      return true;
    } else if (request.kind === 'pause') bot.pauseRule(request.ruleId);
    else bot.resumeRule(request.ruleId);
  } catch (err) {
    if (
      (err instanceof RuntimeError && TRY_LATER.has(err.code)) ||
      (err instanceof SlotRequestError && err.busy)
    ) {
      log.info({ ...request, error: err.message }, 'fleet request not carried out yet');
      return false;
    }
    if (!(err instanceof RuntimeError) && !(err instanceof SlotRequestError)) {
      // The store did not commit (a fenced commit, the database): the claim stays, and the
      // request is carried out again by this member's next bot, or by the rule's next owner.
      log.warn({ ...request, error: (err as Error).message }, 'fleet request not carried out yet');
      return false;
    }
    log.warn({ ...request, error: (err as Error).message }, 'fleet request not carried out');
    return true;
  }
  log.info({ ...request }, 'fleet request carried out');
  return true;
}
