import type { Event } from '../../ledger/wire/wire-types.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import type { Explanation, Intent } from '../../rules/evaluation-result.js';
import { unwrapEvent } from '../../rules/match-event.js';
import { indexRules, type RuleIndex } from '../../rules/rule-index.js';
import type { Bot } from '../bot.js';
import {
  describeSelector,
  explainUpdate,
  type ExplainInputs,
  type UpdateSelector,
} from '../explain-update.js';
import { badRequest, HttpProblem, ledgerProblem, notFound, type Route } from './ops-http.js';

/** What `GET /explain` reads the participant with, besides the bot's own rules and filter. */
export type OpsExplainDeps = Pick<ExplainInputs, 'ledger' | 'parties'> & {
  readonly packageNameOf?: (packageId: string) => string | undefined;
};

/** Update ids are the participant's (hex); this bounds what is passed on. */
const UPDATE_ID = /^[A-Za-z0-9:._-]{1,256}$/;

/**
 * `GET /explain?updateId=…` (or `?offset=N`): why each rule of the running bot did (not) fire on
 * one update, condition by condition, and what it would submit: `ledgerbot explain` as JSON,
 * with the rules in effect (reloads included). Absent deps: 404.
 */
export function explainRoute(bot: Bot, deps: OpsExplainDeps | undefined): Route {
  const indexes = new WeakMap<RuleSet, RuleIndex>();
  return {
    method: 'GET',
    pattern: /^\/explain$/,
    auth: true,
    handle: async (_params, url) => {
      if (deps === undefined) throw notFound('explain is not available here');
      const which = selectorOf(url.searchParams);
      const updateFormat = bot.plan.updateFormat;
      if (updateFormat === null) {
        throw new HttpProblem(
          409,
          'CONFLICT',
          'no enabled rule reacts to ledger events (schedule rules only): there is nothing to explain',
        );
      }
      let index = indexes.get(bot.rules);
      if (index === undefined) {
        index = indexRules(bot.rules);
        indexes.set(bot.rules, index);
      }
      let explained;
      try {
        explained = await explainUpdate(
          {
            ledger: deps.ledger,
            index,
            plan: bot.plan,
            updateFormat,
            parties: deps.parties,
            packageNameOf: deps.packageNameOf ?? (() => undefined),
          },
          which,
        );
      } catch (err) {
        throw ledgerProblem(err, 'the read') ?? err;
      }
      const what = describeSelector(which);
      switch (explained.kind) {
        case 'filtered':
          throw notFound(
            `${what} exists, but none of its events passes the bot's subscription filter: no enabled rule watches its templates as a party that sees them`,
          );
        case 'not-found':
          throw notFound(`${what} was not found, or none of the rules' parties can see it`);
        case 'not-a-transaction':
          throw new HttpProblem(
            422,
            'NOT_A_TRANSACTION',
            `${what} is not a transaction (${explained.updateKind}); rules react to transactions only`,
          );
        case 'explained':
          break;
      }
      const tx = explained.transaction;
      return {
        status: 200,
        body: {
          updateId: tx.updateId,
          offset: tx.offset,
          recordTime: tx.recordTime,
          events: explained.events.map(({ event, result }) => ({
            ...eventColumns(event),
            rules: result.explanations.map((e) =>
              ruleView(
                e,
                result.intents.filter((i) => i.ruleId === e.ruleId),
              ),
            ),
          })),
        },
      };
    },
  };
}

function selectorOf(q: URLSearchParams): UpdateSelector {
  const updateId = q.get('updateId');
  const offset = q.get('offset');
  if (updateId !== null && offset !== null) throw badRequest('give updateId or offset, not both');
  if (offset !== null) {
    const n = Number(offset);
    if (offset.trim() === '' || !Number.isSafeInteger(n) || n < 1) {
      throw badRequest(`offset must be a positive whole number, not "${offset.slice(0, 40)}"`);
    }
    return { offset: n };
  }
  if (updateId === null || updateId.trim() === '') {
    throw badRequest('updateId (or offset) is required');
  }
  if (!UPDATE_ID.test(updateId.trim())) {
    throw badRequest('updateId must be an update id: letters, digits, ":", ".", "_" and "-"');
  }
  return { updateId: updateId.trim() };
}

function eventColumns(event: Event): {
  nodeId: number;
  kind: 'created' | 'exercised' | 'archived' | 'unknown';
  templateId: string | null;
  contractId: string | null;
  choice?: string;
} {
  const [kind, e] = unwrapEvent(event);
  if (e === undefined) return { nodeId: -1, kind: 'unknown', templateId: null, contractId: null };
  return {
    nodeId: e.nodeId,
    kind,
    templateId: e.templateId,
    contractId: e.contractId,
    ...('choice' in e ? { choice: e.choice } : {}),
  };
}

function ruleView(e: Explanation, intents: readonly Intent[]): Record<string, unknown> {
  return {
    ruleId: e.ruleId,
    file: e.pos.file,
    line: e.pos.line,
    fired: e.fired,
    reason: reasonOf(e),
    conditions: e.conditions.map((c) => ({
      text: c.source,
      result: c.outcome,
      ...(c.outcome === 'error' && e.error !== null ? { detail: e.error.message } : {}),
    })),
    commands: intents.map((i) => ({
      commandId: i.commandId,
      actionIndex: i.actionIndex,
      actAs: i.actAs,
      command: i.command,
    })),
  };
}

/** Why the rule did not fire, in words; null when it fired. */
function reasonOf(e: Explanation): string | null {
  if (e.fired) return null;
  if (!e.triggerMatched) return e.mismatch?.message ?? 'the trigger did not match';
  if (e.error !== null) return e.error.message;
  const failed = e.conditions.find((c) => c.outcome === 'false');
  return failed === undefined
    ? 'it did not fire'
    : `when[${failed.index}] is false: ${failed.source}`;
}
