import type { Pool } from 'pg';
import { checkSchemaName, quoteIdentifier } from './quote-identifier.js';

/** What an operator asked of a rule's owner (see `FleetRequests`). */
export type FleetRequest =
  | { readonly kind: 'retry' | 'drop'; readonly ruleId: string; readonly commandId: string }
  | { readonly kind: 'pause' | 'resume'; readonly ruleId: string };

/**
 * Fleet-wide operations in PostgreSQL (the `fleet` component's tables, version 2). An action on a
 * rule another member runs is posted here and taken by the rule's owner at its next round:
 * `take` deletes what it returns, so a request is carried out at most once, by one member (a
 * member killed between taking and doing loses it: the operator asks again). Pauses are kept
 * too (`lb_fleet_rule_control`): a member that starts running a rule pauses it if it is paused.
 */
export class FleetRequests {
  readonly #pool: Pick<Pool, 'query'>;
  readonly #requests: string;
  readonly #control: string;

  constructor(pool: Pick<Pool, 'query'>, schema: string) {
    const q = quoteIdentifier(checkSchemaName(schema));
    this.#pool = pool;
    this.#requests = `${q}.lb_fleet_requests`;
    this.#control = `${q}.lb_fleet_rule_control`;
  }

  /** Posts `request` for the owner of its rule (`by`: the asking member, for the record). */
  async post(request: FleetRequest, by: string): Promise<void> {
    await this.#pool.query(
      `INSERT INTO ${this.#requests} (rule_id, kind, command_id, requested_by) VALUES ($1, $2, $3, $4)`,
      [request.ruleId, request.kind, 'commandId' in request ? request.commandId : null, by],
    );
  }

  /** Takes (deletes and returns, oldest first) the requests for these rules. */
  async take(ruleIds: readonly string[]): Promise<FleetRequest[]> {
    if (ruleIds.length === 0) return [];
    const { rows } = await this.#pool.query<{
      id: string;
      rule_id: string;
      kind: FleetRequest['kind'];
      command_id: string | null;
    }>(
      `DELETE FROM ${this.#requests} WHERE rule_id = ANY($1::text[])
       RETURNING id, rule_id, kind, command_id`,
      [ruleIds],
    );
    return rows
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((r) =>
        r.kind === 'retry' || r.kind === 'drop'
          ? { kind: r.kind, ruleId: r.rule_id, commandId: r.command_id ?? '' }
          : { kind: r.kind, ruleId: r.rule_id },
      );
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
