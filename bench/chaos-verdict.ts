import { openSqliteStore } from '../src/store/open-sqlite-store.js';
import { isTerminal, type IntentRecord, type IntentState } from '../src/store/store.js';
import { activeContracts, EFFECT, INVOICE, type ChaosLedger } from './chaos-ledger.js';

/** What the ledger holds once the run has drained, compared with the plan. */
export type LedgerVerdict = {
  readonly invoices: number;
  /** The offset of the newest invoice: a bot that has read past it has seen every trigger. */
  readonly lastInvoiceOffset: number;
  readonly duplicateInvoices: readonly string[];
  readonly effects: number;
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
  const contracts = await activeContracts(l, [INVOICE, EFFECT]);
  const per = (template: string): Map<string, number> => {
    const m = new Map<string, number>();
    for (const c of contracts) {
      if (c.template === template) m.set(c.reference, (m.get(c.reference) ?? 0) + 1);
    }
    return m;
  };
  const invoices = per(INVOICE);
  const effects = per(EFFECT);
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
  /** References with more than one intent of the effect rule. */
  readonly doubleIntents: readonly string[];
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
  for (const v of Object.values(o)) {
    const r = referenceOf(v);
    if (r !== undefined) return r;
  }
  return undefined;
}

/** Reads a replica's store (read-only) and checks every intent and dead letter in it. */
export function storeVerdict(
  replica: string,
  stateDir: string,
  rejected: ReadonlySet<string>,
  seesEveryEvent: boolean,
): StoreVerdict {
  const store = openSqliteStore({ dir: stateDir, readonly: true });
  try {
    const intents: IntentRecord[] = store.listIntents({ limit: ALL });
    const open: string[] = [];
    const wrongEnd: string[] = [];
    const refs = new Map<string, number>();
    for (const i of intents) {
      const ref = referenceOf(i.payload) ?? `?${i.commandId}`;
      refs.set(ref, (refs.get(ref) ?? 0) + 1);
      if (!isTerminal(i.state)) {
        open.push(`${ref} ${i.commandId} ${i.state}`);
        continue;
      }
      const want = rejected.has(ref) ? ['dead-lettered'] : ['succeeded', 'duplicate'];
      if (!want.includes(i.state)) wrongEnd.push(`${ref} ${i.commandId} ${i.state}`);
    }
    const letters = store.listDeadLetters({ limit: ALL });
    const lettered = new Set(letters.map((d) => referenceOf(d.intent.payload) ?? ''));
    return {
      replica,
      checkpoint: store.checkpoint(),
      states: store.countByState(),
      intents: intents.length,
      deadLetters: letters.length,
      open,
      wrongEnd,
      doubleIntents: [...refs].filter(([, n]) => n > 1).map(([r]) => r),
      missingDeadLetters: seesEveryEvent ? [...rejected].filter((r) => !lettered.has(r)) : [],
    };
  } finally {
    store.close();
  }
}
