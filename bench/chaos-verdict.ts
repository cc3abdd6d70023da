import pg from 'pg';
import { openSqliteStore } from '../src/store/open-sqlite-store.js';
import { pgTypes } from '../src/store/pg/load-pg.js';
import { PgJournalQueries } from '../src/store/pg/pg-journal-queries.js';
import { quoteIdentifier } from '../src/store/pg/quote-identifier.js';
import {
  isTerminal,
  type DeadLetter,
  type IntentRecord,
  type IntentState,
} from '../src/store/store.js';
import { CLOSE_RULE_ID } from './chaos-bots.js';
import { activeContracts, CLOSED, EFFECT, INVOICE, type ChaosLedger } from './chaos-ledger.js';

/** What the ledger holds once the run has drained, compared with the plan. */
export type LedgerVerdict = {
  readonly invoices: number;
  /** The offset of the newest invoice: a bot that has read past it has seen every trigger. */
  readonly lastInvoiceOffset: number;
  readonly duplicateInvoices: readonly string[];
  /** Effects made, closed or not (an Effect and its Closed count as one effect). */
  readonly effects: number;
  /** Effects closed by the consuming rule (a Closed contract each). */
  readonly closed: number;
  /** References whose Effect is still open at the end (its Close never landed). */
  readonly unclosed: readonly string[];
  /** References with more than one Effect or Closed. */
  readonly duplicates: readonly string[];
  readonly missing: readonly string[];
  /** Effects for a reference the plan did not expect one for (a designed rejection that landed). */
  readonly unexpected: readonly string[];
};

export async function ledgerVerdict(
  l: ChaosLedger,
  planned: readonly string[],
  rejected: ReadonlySet<string>,
): Promise<LedgerVerdict> {
  const contracts = await activeContracts(l, [INVOICE, EFFECT, CLOSED]);
  const per = (template: string): Map<string, number> => {
    const m = new Map<string, number>();
    for (const c of contracts) {
      if (c.template === template) m.set(c.reference, (m.get(c.reference) ?? 0) + 1);
    }
    return m;
  };
  const invoices = per(INVOICE);
  const open = per(EFFECT);
  const closed = per(CLOSED);
  // An Effect, closed or not, is one effect: a double create would show as two.
  const effects = new Map(open);
  for (const [r, k] of closed) effects.set(r, (effects.get(r) ?? 0) + k);
  const plannedSet = new Set(planned);
  const many = (m: Map<string, number>): string[] =>
    [...m].filter(([, n]) => n > 1).map(([r]) => r);
  return {
    invoices: [...invoices.values()].reduce((a, b) => a + b, 0),
    lastInvoiceOffset: contracts
      .filter((c) => c.template === INVOICE)
      .reduce((a, c) => Math.max(a, c.offset), 0),
    duplicateInvoices: many(invoices),
    effects: [...effects.values()].reduce((a, b) => a + b, 0),
    closed: [...closed.values()].reduce((a, b) => a + b, 0),
    unclosed: [...open.keys()],
    duplicates: many(effects),
    missing: planned.filter((r) => !rejected.has(r) && !effects.has(r)),
    unexpected: [...effects.keys()].filter((r) => rejected.has(r) || !plannedSet.has(r)),
  };
}

/** The quick look the drain polls: open intents and dead letters in one store. */
export function storeCounts(stateDir: string): Record<IntentState, number> | undefined {
  let store;
  try {
    store = openSqliteStore({ dir: stateDir, readonly: true });
  } catch {
    return undefined;
  }
  try {
    return store.countByState();
  } finally {
    store.close();
  }
}

export type StoreVerdict = {
  readonly replica: string;
  readonly checkpoint: number | undefined;
  readonly states: Record<IntentState, number>;
  readonly intents: number;
  readonly deadLetters: number;
  /** Intents not in a terminal state. */
  readonly open: readonly string[];
  /** Intents whose end is not the designed one (a designed rejection must be dead-lettered, every other intent must have succeeded). */
  readonly wrongEnd: readonly string[];
  /** References with more than one intent of one rule. */
  readonly doubleIntents: readonly string[];
  /**
   * Intents settled `rejected` although their effect is on the ledger (an attempt committed):
   * what a contention error after an unseen commit used to do to a consuming command.
   */
  readonly rejectedButCommitted: readonly string[];
  /** Designed rejections this store should hold as dead letters but does not (the first replica sees them all). */
  readonly missingDeadLetters: readonly string[];
};

const ALL = 1_000_000_000;

/** The `reference` the intent's command carries (its createArguments), found anywhere in it. */
export function referenceOf(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== 'object') return undefined;
  if (Array.isArray(payload)) {
    for (const p of payload) {
      const r = referenceOf(p);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  const o = payload as Record<string, unknown>;
  if (typeof o.reference === 'string') return o.reference;
  // The close rule's exercise has no reference in its arguments; its workflowId carries it.
  if (typeof o.workflowId === 'string' && o.workflowId.startsWith('ref:')) {
    return o.workflowId.slice(4);
  }
  for (const v of Object.values(o)) {
    const r = referenceOf(v);
    if (r !== undefined) return r;
  }
  return undefined;
}

/** What `storeVerdict` checks: a replica's whole journal, read once its bot has stopped. */
export type JournalContents = {
  readonly intents: readonly IntentRecord[];
  readonly deadLetters: readonly DeadLetter[];
  readonly checkpoint: number | undefined;
  readonly states: Record<IntentState, number>;
};

/** A replica's SQLite journal, read-only. */
export function readSqliteJournal(stateDir: string): JournalContents {
  const store = openSqliteStore({ dir: stateDir, readonly: true });
  try {
    return {
      intents: store.listIntents({ limit: ALL }),
      deadLetters: store.listDeadLetters({ limit: ALL }),
      checkpoint: store.checkpoint(),
      states: store.countByState(),
    };
  } finally {
    store.close();
  }
}

/**
 * A replica's PostgreSQL journal (its schema), read with the operator's queries: no store is
 * opened, so nothing is migrated or locked. The checkpoint is the single bot's row (`default`).
 */
export async function readPgJournal(url: string, schema: string): Promise<JournalContents> {
  const pool = new pg.Pool({ connectionString: url, max: 2, types: pgTypes(pg) });
  try {
    const q = new PgJournalQueries(pool, schema);
    const { rows } = await pool.query<{ resume_offset: number | null }>(
      `SELECT resume_offset FROM ${quoteIdentifier(schema)}.lb_checkpoints WHERE owner = 'default'`,
    );
    return {
      intents: await q.listIntents({ limit: ALL }),
      deadLetters: await q.listDeadLetters({ limit: ALL }),
      checkpoint: rows[0]?.resume_offset ?? undefined,
      states: await q.countByState(),
    };
  } finally {
    await pool.end();
  }
}

/** Checks every intent and dead letter of a replica's journal. */
export function storeVerdict(
  replica: string,
  journal: JournalContents,
  rejected: ReadonlySet<string>,
  seesEveryEvent: boolean,
  ledger?: LedgerLanded,
): StoreVerdict {
  const intents = journal.intents;
  const open: string[] = [];
  const wrongEnd: string[] = [];
  const refs = new Map<string, number>();
  const rejectedButCommitted: string[] = [];
  for (const i of intents) {
    const ref = referenceOf(i.payload) ?? `?${i.commandId}`;
    const key = `${i.ruleId} ${ref}`;
    refs.set(key, (refs.get(key) ?? 0) + 1);
    if (i.state === 'rejected' && ledger !== undefined && landed(ledger, i.ruleId, ref)) {
      rejectedButCommitted.push(`${ref} ${i.commandId} ${i.ruleId}`);
    }
    if (!isTerminal(i.state)) {
      open.push(`${ref} ${i.commandId} ${i.state}`);
      continue;
    }
    const want = rejected.has(ref) ? ['dead-lettered'] : ['succeeded', 'duplicate'];
    if (!want.includes(i.state)) wrongEnd.push(`${ref} ${i.commandId} ${i.state}`);
  }
  const letters = journal.deadLetters;
  const lettered = new Set(letters.map((d) => referenceOf(d.intent.payload) ?? ''));
  return {
    replica,
    checkpoint: journal.checkpoint,
    states: journal.states,
    intents: intents.length,
    deadLetters: letters.length,
    open,
    wrongEnd,
    doubleIntents: [...refs].filter(([, n]) => n > 1).map(([r]) => r),
    rejectedButCommitted,
    missingDeadLetters: seesEveryEvent ? [...rejected].filter((r) => !lettered.has(r)) : [],
  };
}

/** The references whose effect, and whose Close, the ledger shows. */
export type LedgerLanded = {
  readonly effects: ReadonlySet<string>;
  readonly closed: ReadonlySet<string>;
};

/** What the ledger shows for `ledgerVerdict`'s contracts, as sets for `storeVerdict`. */
export async function ledgerLanded(l: ChaosLedger): Promise<LedgerLanded> {
  const contracts = await activeContracts(l, [EFFECT, CLOSED]);
  const closed = new Set(contracts.filter((c) => c.template === CLOSED).map((c) => c.reference));
  return { effects: new Set(contracts.map((c) => c.reference)), closed };
}

function landed(ledger: LedgerLanded, ruleId: string, ref: string): boolean {
  return ruleId === CLOSE_RULE_ID ? ledger.closed.has(ref) : ledger.effects.has(ref);
}
