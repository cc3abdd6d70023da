import type BetterSqlite3 from 'better-sqlite3';
import type { JournalMemory } from './journal-memory.js';
import { toDeadLetter, toIntent, type DeadLetterRow, type IntentRow } from './sqlite-rows.js';
import {
  INTENT_STATES,
  type DeadLetter,
  type IntentQuery,
  type IntentRecord,
  type IntentState,
} from './store.js';

/*
 * The stores' lists: memory over the folded rows (SQLite; PostgreSQL lists memory alone). Memory shadows a folded row of the same
 * intent, so a query asks SQL for `limit` plus as many rows as memory may shadow, in the SQL
 * `ORDER BY`, and merges memory's sorted matches into them, making records only of the rows that
 * make the cut (a page of a large journal costs about `limit` records, not the whole memory's
 * worth of rows).
 */

export function listIntents(
  mem: JournalMemory,
  db: BetterSqlite3.Database | undefined,
  query: IntentQuery,
  limit: number,
): IntentRecord[] {
  const states = query.states === undefined ? undefined : new Set(query.states);
  const recent = query.order === 'recent';
  const order = recent ? byRecent : byJustifyingOffset;
  const before = recent ? query.before : undefined;
  const fromMemory: IntentRecord[] = [];
  for (const e of mem.values()) {
    if (e.deleted || (states !== undefined && !states.has(e.row.state))) continue;
    if (before !== undefined && byRecent(e.record, before) <= 0) continue;
    if (query.ruleId === undefined || e.row.rule_id === query.ruleId) fromMemory.push(e.record);
  }
  fromMemory.sort(order);
  const out: IntentRecord[] = [];
  let m = 0;
  const folded = db === undefined ? [] : foldedRows(db, query, limit < 0 ? -1 : limit + mem.size);
  for (const row of folded) {
    if (limit >= 0 && out.length >= limit) break;
    if (mem.has(row.command_id)) continue;
    const key = keyOf(row);
    while (m < fromMemory.length && order(fromMemory[m]!, key) <= 0) out.push(fromMemory[m++]!);
    out.push(toIntent(row));
  }
  while (m < fromMemory.length) out.push(fromMemory[m++]!);
  return limit < 0 ? out : out.slice(0, limit);
}

type OrderKey = Pick<IntentRecord, 'updatedAt' | 'commandId' | 'offset' | 'createdAt'>;

function keyOf(row: IntentRow): OrderKey {
  return {
    updatedAt: row.updated_at,
    commandId: row.command_id,
    offset: row.justifying_offset,
    createdAt: row.created_at,
  };
}

/** The order of `listIntents` with order `recent`: the latest change first. */
export function byRecent(
  a: Pick<IntentRecord, 'updatedAt' | 'commandId'>,
  b: Pick<IntentRecord, 'updatedAt' | 'commandId'>,
): number {
  return b.updatedAt - a.updatedAt || compareText(b.commandId, a.commandId);
}

function foldedRows(
  db: BetterSqlite3.Database,
  query: IntentQuery,
  limit: number,
): IterableIterator<IntentRow> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (query.states !== undefined) {
    where.push(`state IN (${query.states.map(() => '?').join(', ') || 'NULL'})`);
    params.push(...query.states);
  }
  if (query.ruleId !== undefined) {
    where.push('rule_id = ?');
    params.push(query.ruleId);
  }
  const recent = query.order === 'recent';
  if (recent && query.before !== undefined) {
    // Row values compare as the index orders them (intents_recent, schema version 4).
    where.push('(updated_at, command_id) < (?, ?)');
    params.push(query.before.updatedAt, query.before.commandId);
  }
  const order = recent
    ? 'updated_at DESC, command_id DESC'
    : 'justifying_offset, created_at, command_id';
  const sql =
    `SELECT * FROM intents ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ` +
    `ORDER BY ${order} LIMIT ?`;
  return db.prepare<unknown[], IntentRow>(sql).iterate(...params, limit);
}

/** The folded counts, corrected by what memory changed since the fold. */
export function countByState(
  mem: JournalMemory,
  folded: readonly { state: IntentState; n: number }[],
): Record<IntentState, number> {
  const counts = Object.fromEntries(INTENT_STATES.map((s) => [s, 0])) as Record<
    IntentState,
    number
  >;
  for (const row of folded) counts[row.state] = row.n;
  for (const e of mem.values()) {
    if (e.base !== undefined) counts[e.base] -= 1;
    if (!e.deleted) counts[e.row.state] += 1;
  }
  return counts;
}

export function listDeadLetters(
  mem: JournalMemory,
  folded: (limit: number) => DeadLetterRow[],
  ruleId: string | undefined,
  limit: number,
): DeadLetter[] {
  const found: DeadLetter[] = [];
  for (const e of mem.values()) {
    if (e.deadLetter === undefined || e.deleted) continue;
    if (ruleId === undefined || e.row.rule_id === ruleId) found.push(e.deadLetter.value);
  }
  for (const row of folded(limit < 0 ? -1 : limit + mem.size)) {
    if (!mem.has(row.command_id)) found.push(toDeadLetter(row));
  }
  found.sort(
    (a, b) =>
      a.deadLetteredAt - b.deadLetteredAt || compareText(a.intent.commandId, b.intent.commandId),
  );
  return limit < 0 ? found : found.slice(0, limit);
}

/** The order of `openIntents` and `listIntents`, as the SQL `ORDER BY` has it. */
export function byJustifyingOffset(
  a: Pick<IntentRecord, 'offset' | 'createdAt' | 'commandId'>,
  b: Pick<IntentRecord, 'offset' | 'createdAt' | 'commandId'>,
): number {
  return a.offset - b.offset || a.createdAt - b.createdAt || compareText(a.commandId, b.commandId);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
