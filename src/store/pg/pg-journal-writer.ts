import type pg from 'pg';
import type { JournalEntry } from '../journal-entry.js';
import type { SlotRecord } from '../store.js';
import type { CommitFence, LeaseHold } from './commit-fence.js';
import {
  PG_INTENT_COLUMNS,
  PG_MUTABLE_COLUMNS,
  pgColumnValue,
  type PgIntentColumn,
} from './pg-intent-columns.js';
import { ruleCheckpointOwner } from './load-pg-journal.js';
import { quoteIdentifier } from './quote-identifier.js';

/** What one group commit writes: taken from memory when the group ends. */
export type PgCommit = {
  /** Intents new since the last commit: their whole row. */
  readonly inserts: readonly JournalEntry[];
  /** Intents the database has: their changing columns. */
  readonly updates: readonly JournalEntry[];
  /** Purged dead letters. */
  readonly deletes: readonly string[];
  readonly slots: readonly SlotRecord[];
  /** The checkpoint, when it changed. */
  readonly checkpoint:
    { readonly resume: number | null; readonly processed: number | null } | undefined;
  /** The leases the commit writes under, for the fence. */
  readonly holds: readonly LeaseHold[];
};

const SLOT_COLUMNS = [
  ['rule_id', 'text'],
  ['last_completed_slot', 'bigint'],
  ['in_progress_slot', 'bigint'],
  ['in_progress_since', 'bigint'],
  ['snapshot_offset', 'bigint'],
] as const;

/**
 * Writes the PostgreSQL store's group commits, one at a time and in order. A commit is ONE
 * statement (one round trip, atomic on its own): data-modifying CTEs upsert the new intents from
 * `unnest`ed column arrays, update the changed ones, delete the purged ones, upsert the slots
 * and the checkpoint. With a fence it runs in a transaction after the fence's check. A commit
 * that fails fails every later one too (they never run): the store is dead from then on.
 */
export class PgJournalWriter {
  readonly #pool: pg.Pool;
  /** The checkpoint's rows: the owner's, or a fleet member's rules' (one each). */
  readonly #owners: readonly string[];
  /** A fleet member's rules: compaction deletes only theirs. */
  readonly #rules: readonly string[] | undefined;
  readonly #fence: CommitFence | undefined;
  /** Quoted. */
  readonly #schema: string;
  readonly #sql: string;
  #tail: Promise<void> = Promise.resolve();

  constructor(
    pool: pg.Pool,
    schema: string,
    owner: string,
    fence: CommitFence | undefined,
    rules?: readonly string[],
  ) {
    this.#pool = pool;
    this.#owners = rules === undefined ? [owner] : rules.map(ruleCheckpointOwner);
    this.#rules = rules;
    this.#fence = fence;
    this.#schema = quoteIdentifier(schema);
    this.#sql = commitSql(this.#schema);
  }

  /** Queues `commit` after the previous one; resolves once it committed. */
  commit(commit: PgCommit): Promise<void> {
    const values = this.#values(commit);
    const run = this.#tail.then(() => this.#run(commit, values));
    this.#tail = run;
    return run;
  }

  /**
   * Deletes the finished intents last changed before `cutoff` whose event is at or below
   * `resume` (the committed checkpoint), and returns how many.
   */
  async compact(cutoff: number, resume: number): Promise<number> {
    // A fleet member deletes only its rules' intents: another rule's checkpoint may be lower.
    const result = await this.#pool.query(
      `DELETE FROM ${this.#schema}.lb_intents
       WHERE state IN ('succeeded', 'duplicate', 'rejected') AND updated_at < $1
         AND (trigger_kind = 'slot' OR justifying_offset <= $2)
         AND ($3::text[] IS NULL OR rule_id = ANY($3::text[]))`,
      [cutoff, resume, this.#rules ?? null],
    );
    return result.rowCount ?? 0;
  }

  /** Resolves once every queued commit settled (never rejects). */
  settled(): Promise<void> {
    return this.#tail.then(
      () => undefined,
      () => undefined,
    );
  }

  /** The statement that writes `commit`, for a caller's own transaction (an import). */
  statement(commit: PgCommit): pg.QueryConfig {
    return { name: 'lb_group_commit', text: this.#sql, values: this.#values(commit) };
  }

  async #run(commit: PgCommit, values: unknown[]): Promise<void> {
    try {
      await this.#runOnce(commit, values);
    } catch (err) {
      throw refusedRewrite(err);
    }
  }

  async #runOnce(commit: PgCommit, values: unknown[]): Promise<void> {
    const query = { name: 'lb_group_commit', text: this.#sql, values };
    const fence = this.#fence;
    if (fence === undefined) {
      await this.#pool.query(query);
      return;
    }
    const client = await this.#pool.connect();
    let broken: unknown;
    try {
      await client.query('BEGIN');
      await fence.check(client, commit.holds);
      await client.query(query);
      await client.query('COMMIT');
    } catch (err) {
      broken = err;
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      // A connection that failed mid-transaction is closed, not put back for reuse.
      client.release(broken !== undefined);
    }
  }

  #values(c: PgCommit): unknown[] {
    const values: unknown[] = [];
    for (const [column] of PG_INTENT_COLUMNS) {
      values.push(c.inserts.map((e) => pgColumnValue(e, column)));
    }
    for (const column of UPDATE_COLUMNS)
      values.push(c.updates.map((e) => pgColumnValue(e, column)));
    values.push(c.deletes);
    values.push(c.slots.map((s) => s.ruleId));
    values.push(c.slots.map((s) => s.lastCompletedSlot ?? null));
    values.push(c.slots.map((s) => s.inProgressSlot ?? null));
    values.push(c.slots.map((s) => s.inProgressSince ?? null));
    values.push(c.slots.map((s) => s.snapshotOffset ?? null));
    values.push(
      c.checkpoint !== undefined,
      this.#owners,
      c.checkpoint?.resume ?? null,
      c.checkpoint?.processed ?? null,
    );
    return values;
  }
}

const UPDATE_COLUMNS: readonly PgIntentColumn[] = [
  'command_id',
  ...PG_INTENT_COLUMNS.map(([c]) => c).filter((c) => PG_MUTABLE_COLUMNS.has(c)),
];

const TYPE_OF = new Map<string, string>(PG_INTENT_COLUMNS);

function commitSql(schema: string): string {
  let n = 0;
  const param = (type: string): string => `$${++n}::${type}`;
  const intents = `${schema}.lb_intents`;
  const all = PG_INTENT_COLUMNS.map(([c]) => c);
  const insertParams = PG_INTENT_COLUMNS.map(([, t]) => param(`${t}[]`));
  const insertArrays = insertParams.join(', ');
  const insertIds = insertParams[all.indexOf('command_id')]!;
  const updateArrays = UPDATE_COLUMNS.map((c) => param(`${TYPE_OF.get(c)!}[]`)).join(', ');
  const deletes = param('text[]');
  const slotArrays = SLOT_COLUMNS.map(([, t]) => param(`${t}[]`)).join(', ');
  const [cpFlag, cpOwner, cpResume, cpProcessed] = [
    param('boolean'),
    param('text[]'),
    param('bigint'),
    param('bigint'),
  ];
  const slotColumns = SLOT_COLUMNS.map(([c]) => c);
  return `WITH
  ins AS (
    INSERT INTO ${intents} (${all.join(', ')})
    SELECT * FROM unnest(${insertArrays})
    ON CONFLICT (command_id) DO UPDATE SET
      ${all
        .filter((c) => c !== 'command_id')
        .map((c) => `${c} = EXCLUDED.${c}`)
        .join(', ')}
    WHERE ${intents}.state NOT IN ('succeeded', 'duplicate', 'rejected')
    RETURNING command_id
  ),
  refused AS MATERIALIZED (
    SELECT id FROM unnest(${insertIds}) AS n (id)
    WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.command_id = n.id)
  ),
  upd AS (
    UPDATE ${intents} AS t SET
      ${UPDATE_COLUMNS.filter((c) => c !== 'command_id')
        .map((c) => `${c} = u.${c}`)
        .join(', ')}
    FROM unnest(${updateArrays}) AS u (${UPDATE_COLUMNS.join(', ')})
    WHERE t.command_id = u.command_id
  ),
  del AS (DELETE FROM ${intents} WHERE command_id = ANY(${deletes})),
  sl AS (
    INSERT INTO ${schema}.lb_schedule_slots (${slotColumns.join(', ')})
    SELECT * FROM unnest(${slotArrays})
    ON CONFLICT (rule_id) DO UPDATE SET
      ${slotColumns
        .slice(1)
        .map((c) => `${c} = EXCLUDED.${c}`)
        .join(', ')}
  ),
  cp AS (
    INSERT INTO ${schema}.lb_checkpoints (owner, resume_offset, processed_offset)
    SELECT o, ${cpResume}, ${cpProcessed} FROM unnest(${cpOwner}) AS o WHERE ${cpFlag}
    ON CONFLICT (owner) DO UPDATE SET
      resume_offset = ${keepAhead('resume_offset')},
      processed_offset = ${keepAhead('processed_offset')}
  )
SELECT ('${REFUSED} ' || id)::bigint FROM refused`;
}

/**
 * The guard of a new intent's write (see `commitSql`): an insert that meets a finished row
 * (`succeeded`, `duplicate`, `rejected`) leaves it as it is, and the statement then fails on
 * purpose, with this text and the intent's id in PostgreSQL's error (a cast of them to a number,
 * made only for the rows `refused` yields, which is materialized so the cast is not evaluated
 * before its filter: plain SQL has no RAISE), so nothing of the commit is written and nothing of it is sent. The
 * store records such an intent only when `lookUpIntents` was skipped: a defect, not a state.
 */
const REFUSED = 'ledgerbot-refused-rewrite-of-finished-intent';

/** The guard's failure as a plain error naming the intent, else `err` as it is. */
function refusedRewrite(err: unknown): unknown {
  const message = err instanceof Error ? err.message : '';
  const at = message.indexOf(REFUSED);
  if (at < 0) return err;
  const id = message.slice(at + REFUSED.length + 1).replace(/"$/, '');
  return new Error(
    `the commit would have replaced the finished intent ${id} with a new record of it, so it was refused and nothing of it written`,
    { cause: err },
  );
}

/**
 * A fleet member writes one checkpoint, the lowest of its rules', to every rule it owns; a rule's
 * row may be further on (written by its previous owner with other rules beside it). Each value
 * is at most the rule's own low-watermark, so the greater is too: a row never moves back, and a
 * later owner does not replay, past compaction, what the rule had settled. The single bot's
 * 'default' row is written as it is (its reset after pruning may move it either way).
 */
function keepAhead(column: string): string {
  return `CASE WHEN lb_checkpoints.owner LIKE 'rule:%'
        THEN GREATEST(lb_checkpoints.${column}, EXCLUDED.${column}) ELSE EXCLUDED.${column} END`;
}
