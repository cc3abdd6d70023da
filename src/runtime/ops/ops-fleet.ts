import type { CompiledRule } from '../../rules/compiled-rule.js';
import type { Bot } from '../bot.js';
import type { FleetRequest } from '../../store/pg/fleet-requests.js';

/** What a fleet member gives its ops server (`/status`'s `fleet`, the fleet-wide operations). */
export type OpsFleet = {
  /** This member, the members and who owns which rule. */
  status(): Promise<Record<string, unknown>>;
  /**
   * Posts an action on a rule this member does not run, for its owner (taken at the owner's
   * next round). Resolves with the owner's instance id (null while nobody holds it), or
   * undefined when the fleet's rules have no such rule.
   */
  forward(request: FleetRequest): Promise<{ readonly owner: string | null } | undefined>;
  /** The fleet's rule of this id (whoever runs it), as this member loaded it; undefined if none. */
  rule(ruleId: string): CompiledRule | undefined;
  /** Records a pause (or resume) for the whole fleet: whoever runs the rule, now or later. */
  setPaused(ruleId: string, paused: boolean): Promise<void>;
};

/** The answer of an action the owner of its rule will carry out (HTTP 202). */
export function forwardedAnswer(
  request: FleetRequest,
  owner: string | null,
): { status: number; body: Record<string, unknown> } {
  const at = 'at' in request ? { at: new Date(request.at).toISOString() } : {};
  return { status: 202, body: { forwarded: { ...request, ...at, owner } } };
}

/**
 * Whether this member's bot carries out an action on something it holds (its rule, a dead letter
 * of its store) now. Otherwise a fleet member posts the action for the rule's owner: another
 * member, or this one once its bot, still starting, runs.
 */
export function actsHere(bot: Bot, held: boolean): boolean {
  return held && bot.state === 'running';
}

/** `actsHere` for an action on a rule: held when this bot runs the rule. */
export function actsOnRule(bot: Bot, ruleId: string): boolean {
  return actsHere(
    bot,
    bot.rules.rules.some((r) => r.id === ruleId),
  );
}
