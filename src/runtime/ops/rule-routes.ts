import type { Bot } from '../bot.js';
import { actsOnRule, forwardedAnswer, type OpsFleet } from './ops-fleet.js';
import { iso, notFound, type Route } from './ops-http.js';
import type { ReloadHistory, ReloadOutcome } from './reload-history.js';
import type { RuleRows } from './rule-rows.js';

export type RuleRoutesDeps = {
  readonly bot: Bot;
  readonly rows: RuleRows;
  readonly reloads: ReloadHistory;
  /** `POST /rules/reload`, recording into `reloads`; absent: 404. */
  readonly reload?: () => Promise<ReloadOutcome>;
  /** A fleet member's: pauses are fleet-wide, and a rule another member runs is its owner's. */
  readonly fleet?: OpsFleet;
};

/** The rules: their table, pause and resume, the rule set in effect and its reloads. */
export function ruleRoutes(deps: RuleRoutesDeps): Route[] {
  const { bot, rows, reloads } = deps;
  return [
    {
      method: 'GET',
      pattern: /^\/rules$/,
      auth: true,
      handle: () => ({ status: 200, body: { rules: rows.rows(), revision: reloads.revision } }),
    },
    {
      method: 'GET',
      pattern: /^\/reload$/,
      auth: true,
      handle: () => ({
        status: 200,
        body: {
          revision: reloads.revision,
          rules: bot.ruleStatus().map((r) => ({ id: r.id, revision: r.revision, hash: r.hash })),
          last: reloads.last ?? null,
        },
      }),
    },
    {
      method: 'POST',
      pattern: /^\/rules\/reload$/,
      auth: true,
      handle: async () => {
        if (deps.reload === undefined) throw notFound('no reload is configured');
        const outcome = await deps.reload();
        return outcome.applied
          ? { status: 200, body: { applied: true, diff: outcome.diff } }
          : { status: 422, body: { applied: false, errors: outcome.errors } };
      },
    },
    {
      method: 'POST',
      pattern: /^\/rules\/([^/]+)\/(pause|resume)$/,
      auth: true,
      handle: async ([id, action]) => {
        const fleet = deps.fleet;
        // Recorded for the fleet and posted when this bot cannot act now (another member's
        // rule, or a bot still starting): the rule's owner carries it out.
        if (fleet !== undefined && !actsOnRule(bot, id!)) {
          const request = { kind: action as 'pause' | 'resume', ruleId: id! };
          const sent = await fleet.forward(request);
          if (sent === undefined) throw notFound(`no rule with id "${id}" in the fleet`);
          await fleet.setPaused(id!, action === 'pause');
          return forwardedAnswer(request, sent.owner);
        }
        const r = action === 'pause' ? bot.pauseRule(id!) : bot.resumeRule(id!);
        // Recorded once applied here: the member that runs the rule next pauses it too.
        await fleet?.setPaused(id!, action === 'pause');
        return {
          status: 200,
          body: {
            rule: { ...r, ...(r.pausedAt === undefined ? {} : { pausedAt: iso(r.pausedAt) }) },
          },
        };
      },
    },
  ];
}
