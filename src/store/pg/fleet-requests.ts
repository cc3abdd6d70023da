import type { Pool } from 'pg';
import { checkSchemaName, quoteIdentifier } from './quote-identifier.js';

/** What an operator asked of a rule's owner (see `FleetRequests`). */
export type FleetRequest =
  | { readonly kind: 'retry' | 'drop'; readonly ruleId: string; readonly commandId: string }
  | { readonly kind: 'pause' | 'resume'; readonly ruleId: string }
  /** Run the latest slot of a schedule rule at or before `at` (epoch ms), as `run-slot` does. */
  | { readonly kind: 'run-slot'; readonly ruleId: string; readonly at: number };

/** A request claimed by its rule's owner (`FleetRequests.take`). */
export type ClaimedRequest = {
  /** The row's id, for `done`. */
  readonly id: string;
  readonly request: FleetRequest;
  /**
   * Claimed before, by a member that died before it was done, or by this member in an earlier
   * round that could not finish it: its effect may be there already.
   */
  readonly again: boolean;
};

/**
 * Fleet-wide operations in PostgreSQL (the `fleet` component's tables, versions 2 to 4). An
 * action on a rule another member runs is posted here and carried out by the rule's owner, at
 * least once: `take` claims a request (the claim names the member and the database's time),
 * the owner acts, and `done` deletes the request once the effect is durable. A member that dies
 * in between leaves its claim; the claim is free again once it is older than `claimMs` (the
 * lease period: its taker is dead by then, or no longer owns the rule), so the next owner
 * carries the request out. Effects are idempotent (a retry of an intent no longer dead-lettered,
 * the drop of an absent dead letter, a pause of a paused rule do nothing). Pauses are kept too
 * (`lb_fleet_rule_control`): a member that starts running a rule pauses it if it is paused.
 */
export class FleetRequests {
  readonly #pool: Pick<Pool, 'query'>;
  readonly #requests: string;
  readonly #control: string;
  readonly #claimMs: number;

  constructor(pool: Pick<Pool, 'query'>, schema: string, claimMs: number) {
    const q = quoteIdentifier(checkSchemaName(schema));
    this.#pool = pool;
    this.#claimMs = claimMs;
    this.#requests = `${q}.lb_fleet_requests`;
    this.#control = `${q}.lb_fleet_rule_control`;
  }

  /** Posts `request` for the owner of its rule (`by`: the asking member, for the record). */
  async post(request: FleetRequest, by: string): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#requests} (rule_id, kind, command_id, slot_at, requested_by)
       VALUES ($1, $2, $3, $4, $5)`,
      [
        request.ruleId,
        request.kind,
        'commandId' in request ? request.commandId : null,
        'at' in request ? request.at : null,
        by,
      ],
    );
  }

  /**
   * Claims for member `by` (and returns, oldest first) the requests for these rules that nobody
   * holds: never claimed, claimed by `by` itself (an earlier round of it did not finish them), or
   * claimed longer than `claimMs` ago. A request another member claims at the same moment is
   * skipped, not waited for.
   */
  async take(ruleIds: readonly string[], by: string): Promise<ClaimedRequest[]> {
    if (ruleIds.length === 0) return [];
    const { rows } = await this.#pool.query<{
      id: string;
      rule_id: string;
      kind: FleetRequest['kind'];
      command_id: string | null;
      slot_at: string | null;
      before: string | null;
    }>(
      `UPDATE ${this.#requests} r SET taken_by = $2, taken_at = now()
       FROM (SELECT id, taken_by AS before FROM ${this.#requests}
             WHERE rule_id = ANY($1::text[])
               AND (taken_by IS NULL OR taken_by = $2
                    OR taken_at < now() - $3::double precision * interval '1 millisecond')
             FOR UPDATE SKIP LOCKED) o
       WHERE r.id = o.id
       RETURNING r.id, r.rule_id, r.kind, r.command_id, r.slot_at, o.before`,
      [ruleIds, by, this.#claimMs],
    );
    return rows
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((r) => ({
        id: r.id,
        again: r.before !== null,
        request: requestOf(r),
      }));
  }

  /** Deletes requests carried out (their effect is durable). */
  async done(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#pool.query(`DELETE FROM ${this.#requests} WHERE id = ANY($1::bigint[])`, [ids]);
  }

  /** Records a rule paused (or not) for the whole fleet. */
  async setPaused(ruleId: string, paused: boolean): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#control} (rule_id, paused) VALUES ($1, $2)
       ON CONFLICT (rule_id) DO UPDATE SET paused = EXCLUDED.paused, changed_at = now()`,
      [ruleId, paused],
    );
  }

  /** Which of these rules are paused fleet-wide. */
  async paused(ruleIds: readonly string[]): Promise<string[]> {
    if (ruleIds.length === 0) return [];
    const { rows } = await this.#pool.query<{ rule_id: string }>(
      `SELECT rule_id FROM ${this.#control} WHERE paused AND rule_id = ANY($1::text[]) ORDER BY rule_id`,
      [ruleIds],
    );
    return rows.map((r) => r.rule_id);
  }
}

function requestOf(r: {
  rule_id: string;
  kind: FleetRequest['kind'];
  command_id: string | null;
  slot_at: string | null;
}): FleetRequest {
  if (r.kind === 'retry' || r.kind === 'drop') {
    return { kind: r.kind, ruleId: r.rule_id, commandId: r.command_id ?? '' };
  }
  if (r.kind === 'run-slot') return { kind: r.kind, ruleId: r.rule_id, at: Number(r.slot_at) };
  return { kind: r.kind, ruleId: r.rule_id };
}
