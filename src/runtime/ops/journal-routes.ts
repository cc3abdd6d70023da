import type { Clock } from '../../core/clock.js';
import { DEFAULTS } from '../../core/defaults.js';
import { parseIsoInstant } from '../../core/iso-instant.js';
import type { Logger } from '../../core/logger.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import type { Store } from '../../store/store.js';
import type { Bot } from '../bot.js';
import { deadLetterView } from '../intent-view.js';
import { SlotRequestError, slotToRun, type ManualSlotOutcome } from './manual-slot.js';
import { HttpProblem, iso, ledgerProblem, notFound, type Route } from './ops-http.js';
import { actsHere, actsOnRule, forwardedAnswer, type OpsFleet } from './ops-fleet.js';

const MAX_LIST = 1000;

export type JournalRoutesDeps = {
  readonly bot: Bot;
  /** Writes: dropping a dead letter. */
  readonly store: Store;
  /** Reads: the dead letters. */
  readonly queries: JournalQueries;
  readonly clock: Clock;
  readonly log: Logger;
  /** Absent: `POST /rules/{id}/run-slot` answers 404 (but on a fleet member, see `fleet`). */
  readonly runSlot?: (ruleId: string, at: number) => Promise<ManualSlotOutcome>;
  /**
   * A fleet member's: a dead letter of a rule another member runs, or a slot of its schedule
   * rule, is its owner's to act on.
   */
  readonly fleet?: OpsFleet;
};

/**
 * The ops routes that work on the bot's journal (docs/operations-api.md): running a schedule
 * slot by hand and the dead letters (the intents: intent-routes.ts). Everything that writes goes through
 * the bot (or its store, which only the bot writes), so the store keeps one writer.
 */
export function journalRoutes(deps: JournalRoutesDeps): Route[] {
  const { bot, store, queries, clock, log } = deps;
  /** A dead letter this member does not hold (another member's rule): posted to its owner. */
  const forwarded = async (
    commandId: string,
    kind: 'retry' | 'drop',
  ): Promise<{ status: number; body: Record<string, unknown> } | undefined> => {
    const fleet = deps.fleet;
    if (fleet === undefined || actsHere(bot, store.getDeadLetter(commandId) !== undefined)) {
      return undefined;
    }
    const d = await queries.getDeadLetter(commandId);
    if (d === undefined) return undefined;
    const request = { kind, ruleId: d.intent.ruleId, commandId };
    const sent = await fleet.forward(request);
    if (sent === undefined) return undefined;
    log.info(
      { commandId, ruleId: d.intent.ruleId, owner: sent.owner },
      `dead letter ${kind} forwarded`,
    );
    return forwardedAnswer(request, sent.owner);
  };
  /** A slot of a schedule rule this member does not run (another member's): posted to its owner. */
  const forwardedSlot = async (
    ruleId: string,
    at: number,
  ): Promise<{ status: number; body: Record<string, unknown> } | undefined> => {
    const fleet = deps.fleet;
    if (fleet === undefined || actsOnRule(bot, ruleId)) return undefined;
    const rule = fleet.rule(ruleId);
    if (rule === undefined) return undefined;
    const slot = slotToRun(rule, at); // an event rule, or no slot: refused here, not by the owner
    const request = { kind: 'run-slot', ruleId, at } as const;
    const sent = await fleet.forward(request);
    if (sent === undefined) return undefined;
    log.info({ ruleId, slot: iso(slot), owner: sent.owner }, 'run-slot forwarded');
    return forwardedAnswer(request, sent.owner);
  };
  return [
    {
      method: 'POST',
      pattern: /^\/rules\/([^/]+)\/run-slot$/,
      auth: true,
      handle: async ([id], url) => {
        const unavailable = (): HttpProblem => notFound('run-slot is not available here');
        if (deps.runSlot === undefined && deps.fleet === undefined) throw unavailable();
        const atText = url.searchParams.get('at');
        const now = clock.now();
        const at = atText === null ? now : parseIsoInstant(atText);
        if (at === undefined) {
          throw new HttpProblem(
            400,
            'BAD_REQUEST',
            'at must be an ISO 8601 time with a zone, e.g. 2026-01-05T08:00:00Z',
          );
        }
        if (at > now) {
          // The slot it runs counts as completed: a slot still to come would hold back every
          // slot of the schedule until then.
          throw new HttpProblem(
            400,
            'BAD_REQUEST',
            `at (${iso(at)}) is later than now (${iso(now)}): run-slot runs a slot that is due`,
          );
        }
        try {
          const elsewhere = await forwardedSlot(id!, at);
          if (elsewhere !== undefined) return elsewhere;
          if (deps.runSlot === undefined) throw unavailable();
          const outcome = await deps.runSlot(id!, at);
          log.info(
            { ruleId: id, slot: iso(outcome.slot), intents: outcome.intentCount },
            'slot run by hand',
          );
          return { status: 200, body: { ...outcome, slot: iso(outcome.slot) } };
        } catch (err) {
          if (err instanceof SlotRequestError) {
            throw new HttpProblem(err.status, err.code, err.message);
          }
          throw ledgerProblem(err, 'a read of the slot') ?? err;
        }
      },
    },
    {
      method: 'GET',
      pattern: /^\/dead-letters$/,
      auth: true,
      handle: async (_params, url) => {
        const limitText = url.searchParams.get('limit');
        const limit = limitText === null ? DEFAULTS.deadLetterListLimit : Number(limitText);
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) {
          throw new HttpProblem(400, 'BAD_REQUEST', `limit must be a whole number 1..${MAX_LIST}`);
        }
        const ruleId = url.searchParams.get('ruleId');
        const order = url.searchParams.get('order') ?? 'oldest';
        if (order !== 'oldest' && order !== 'newest') {
          throw new HttpProblem(400, 'BAD_REQUEST', 'order must be oldest or newest');
        }
        const byRule = ruleId === null ? {} : { ruleId };
        // Newest first reads them all (an operator's dead letters are few), then the newest.
        const list =
          order === 'oldest'
            ? await queries.listDeadLetters({ limit, ...byRule })
            : (await queries.listDeadLetters({ limit: -1, ...byRule })).reverse().slice(0, limit);
        return { status: 200, body: { deadLetters: list.map((d) => deadLetterView(d)) } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/dead-letters\/([^/]+)$/,
      auth: true,
      handle: async ([id]) => {
        const d = await queries.getDeadLetter(id!);
        if (d === undefined) throw notFound(`no dead letter with commandId "${id}"`);
        return { status: 200, body: { deadLetter: deadLetterView(d, true) } };
      },
    },
    {
      method: 'POST',
      pattern: /^\/dead-letters\/([^/]+)\/retry$/,
      auth: true,
      handle: async ([id]) => {
        const elsewhere = await forwarded(id!, 'retry');
        if (elsewhere !== undefined) return elsewhere;
        const record = bot.retryDeadLetter(id!);
        log.info({ commandId: record.commandId, ruleId: record.ruleId }, 'dead letter retried');
        return {
          status: 202,
          body: {
            intent: {
              commandId: record.commandId,
              ruleId: record.ruleId,
              state: record.state,
              attempts: record.attempts,
            },
          },
        };
      },
    },
    {
      method: 'DELETE',
      pattern: /^\/dead-letters\/([^/]+)$/,
      auth: true,
      handle: async ([id]) => {
        const elsewhere = await forwarded(id!, 'drop');
        if (elsewhere !== undefined) return elsewhere;
        if (!store.purgeDeadLetter(id!)) throw notFound(`no dead letter with commandId "${id}"`);
        log.info({ commandId: id }, 'dead letter dropped');
        return { status: 200, body: { deleted: true } };
      },
    },
  ];
}
