import type pg from 'pg';
import { DEFAULTS } from '../../core/defaults.js';
import { attemptsOf } from '../attempt-log.js';
import type { JournalQueries } from '../journal-queries.js';
import {
  INTENT_STATES,
  type AttemptRecord,
  type DeadLetter,
  type IntentQuery,
  type IntentRecord,
  type IntentState,
  type SlotRecord,
} from '../store.js';
import { entryOfPgRow, type PgIntentRow } from './pg-intent-columns.js';
import { toSlot, type SlotRow } from '../sqlite-rows.js';
import { quoteIdentifier } from './quote-identifier.js';

/**
 * The operator's reads of the PostgreSQL journal, in SQL over the committed rows (every
 * instance's, in a fleet): what a store's memory changed in the current event-loop turn shows
 * once that turn's group commit is in. Orders and pages as the SQLite store does.
 */
export class PgJournalQueries implements JournalQueries {
  readonly #pool: pg.Pool;
  readonly #s: string;

  constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool;
    this.#s = quoteIdentifier(schema);
  }

  async getIntent(commandId: string): Promise<IntentRecord | undefined> {
    const row = await this.#row(commandId);
    return row === undefined ? undefined : entryOfPgRow(row).record;
  }

  async listIntents(query: IntentQuery = {}): Promise<IntentRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (query.states !== undefined) where.push(`state = ANY(${param([...query.states])}::text[])`);
    if (query.ruleId !== undefined) where.push(`rule_id = ${param(query.ruleId)}`);
    const recent = query.order === 'recent';
    if (recent && query.before !== undefined) {
      where.push(
        `(updated_at, command_id) < (${param(query.before.updatedAt)}::bigint, ${param(query.before.commandId)}::text)`,
      );
    }
    const order = recent
      ? 'updated_at DESC, command_id DESC'
      : 'justifying_offset, created_at, command_id';
    const limit = query.limit ?? DEFAULTS.store.listLimit;
    const { rows } = await this.#pool.query<PgIntentRow>(
      `SELECT * FROM ${this.#s}.lb_intents ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY ${order} ${limit < 0 ? '' : `LIMIT ${param(limit)}`}`,
      params,
    );
    return rows.map((r) => entryOfPgRow(r).record);
  }

  async getAttempts(commandId: string): Promise<AttemptRecord[] | undefined> {
    const row = await this.#row(commandId);
    return row === undefined ? undefined : attemptsOf(row.attempt_log);
  }

  async getRecordedEvent(commandId: string): Promise<unknown> {
    const row = await this.#row(commandId);
    return row?.event == null ? undefined : (JSON.parse(row.event) as unknown);
  }

  async countByState(): Promise<Record<IntentState, number>> {
    const counts = Object.fromEntries(INTENT_STATES.map((s) => [s, 0])) as Record<
      IntentState,
      number
    >;
    const { rows } = await this.#pool.query<{ state: IntentState; n: number }>(
      `SELECT state, count(*) AS n FROM ${this.#s}.lb_intents GROUP BY state`,
    );
    for (const r of rows) counts[r.state] = r.n;
    return counts;
  }

  async listDeadLetters(
    options: { readonly limit?: number; readonly ruleId?: string } = {},
  ): Promise<DeadLetter[]> {
    const limit = options.limit ?? DEFAULTS.store.listLimit;
    const { rows } = await this.#pool.query<PgIntentRow>(
      `SELECT * FROM ${this.#s}.lb_intents
       WHERE state = 'dead-lettered' AND ($1::text IS NULL OR rule_id = $1)
       ORDER BY dead_lettered_at, command_id ${limit < 0 ? '' : 'LIMIT $2'}`,
      limit < 0 ? [options.ruleId ?? null] : [options.ruleId ?? null, limit],
    );
    return rows.flatMap((r) => entryOfPgRow(r).deadLetter?.value ?? []);
  }

  async getDeadLetter(commandId: string): Promise<DeadLetter | undefined> {
    const row = await this.#row(commandId);
    return row === undefined ? undefined : entryOfPgRow(row).deadLetter?.value;
  }

  async listSlotRecords(): Promise<SlotRecord[]> {
    const { rows } = await this.#pool.query<SlotRow>(
      `SELECT * FROM ${this.#s}.lb_schedule_slots ORDER BY rule_id`,
    );
    return rows.map(toSlot);
  }

  /** The ids of the event intents of `ruleId` at `offset` / `nodeId` (see Store.hasEventIntent). */
  async eventIntentIds(ruleId: string, offset: number, nodeId: number): Promise<string[]> {
    const { rows } = await this.#pool.query<{ command_id: string }>(
      `SELECT command_id FROM ${this.#s}.lb_intents
       WHERE trigger_kind = 'event' AND justifying_offset = $1 AND trigger_node_id = $2
         AND rule_id = $3`,
      [offset, nodeId, ruleId],
    );
    return rows.map((r) => r.command_id);
  }

  /** The rows of those of `commandIds` the journal has (for PgStore.lookUpIntents). */
  async intentRows(commandIds: readonly string[]): Promise<PgIntentRow[]> {
    const { rows } = await this.#pool.query<PgIntentRow>(
      `SELECT * FROM ${this.#s}.lb_intents WHERE command_id = ANY($1::text[])`,
      [commandIds],
    );
    return rows;
  }

  async #row(commandId: string): Promise<PgIntentRow | undefined> {
    const { rows } = await this.#pool.query<PgIntentRow>(
      `SELECT * FROM ${this.#s}.lb_intents WHERE command_id = $1`,
      [commandId],
    );
    return rows[0];
  }
}
