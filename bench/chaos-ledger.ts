import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { Random } from '../src/core/random.js';
import { eventFormat } from '../src/ledger/filters.js';
import { LedgerClient } from '../src/ledger/ledger-client.js';
import { startSandboxProcess, type SandboxProcess } from './bench-support.js';
import type { FaultStats } from '../src/sandbox/server/fault-injector.js';

/**
 * The chaos scenario's ledger: the sandbox as its own process with the invoices model and a
 * small `chaos` package for the effect, and the driver that issues the triggering invoices
 * through the same faults the bot sees.
 */
export const INVOICE = '#invoices:Invoice:Invoice';
export const EFFECT = '#chaos:Chaos:Effect';
/** What the consuming `Close` of an Effect leaves: one per reference once the run settled. */
export const CLOSED = '#chaos:Chaos:Closed';
/** Invoices in this currency trigger an effect the ledger refuses for good (the `ensure`). */
export const REJECTED_CURRENCY = 'XXX';
export const DRIVER_USER = 'driver';
export const BOT_USER = 'ledgerbot';

// A create is not consuming, so a duplicate submission of the bot's command would leave a second
// Effect with the same reference: counting them per reference is how the run sees "exactly once".
// Closing an Effect is a consuming exercise: Canton interprets before it deduplicates, so a
// resubmitted Close whose earlier attempt committed is refused as CONTRACT_NOT_FOUND, and only
// the bot's earlier-commit lookup keeps such an intent from ending \`rejected\`.
const CHAOS_MODEL = `package:
  name: chaos
  version: 1.0.0

templates:
  Chaos:Effect:
    fields:
      owner: Party
      reference: Text
      amount: Numeric 2
      currency: Text
    signatories: [owner]
    ensure: 'this.currency != "${REJECTED_CURRENCY}"'
    choices:
      Close:
        controllers: [owner]
        body:
          - create: Chaos:Closed
            with:
              owner: this.owner
              reference: this.reference
  Chaos:Closed:
    fields:
      owner: Party
      reference: Text
    signatories: [owner]
  Chaos:Unused:
    fields:
      owner: Party
    signatories: [owner]
`;

export type ChaosLedger = SandboxProcess & {
  readonly issuer: string;
  readonly payer: string;
  readonly pool: Pool;
  post(path: string, body: unknown, timeoutMs?: number): Promise<HttpAnswer>;
  get(path: string): Promise<unknown>;
  ledgerEnd(): Promise<number>;
  close(): Promise<void>;
};

export type HttpAnswer = { readonly status: number; readonly text: string };

export async function startChaosLedger(dir: string, seed: number): Promise<ChaosLedger> {
  const model = join(dir, 'chaos.model.yaml');
  writeFileSync(model, CHAOS_MODEL);
  const { url, child } = await startSandboxProcess([
    '--model',
    'examples/invoices/model.yaml',
    '--model',
    model,
    '--party',
    'Issuer',
    '--party',
    'Payer',
    '--seed',
    String(seed),
  ]);
  const pool = new Pool(url, { connections: 32 });
  const post = async (path: string, body: unknown, timeoutMs = 10_000): Promise<HttpAnswer> => {
    const res = await pool.request({
      path,
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const get = async (path: string): Promise<unknown> => {
    const res = await pool.request({ path, method: 'GET' });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text) as unknown;
  };
  const parties = (await get('/v2/parties')) as { partyDetails: { party: string }[] };
  const find = (hint: string): string => {
    const p = parties.partyDetails.find((d) => d.party.startsWith(`${hint}::`));
    if (p === undefined) throw new Error(`no party ${hint} on the sandbox`);
    return p.party;
  };
  return {
    url,
    child,
    pool,
    issuer: find('Issuer'),
    payer: find('Payer'),
    post,
    get,
    ledgerEnd: async () => ((await get('/v2/state/ledger-end')) as { offset: number }).offset,
    close: async () => {
      await pool.close();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

export async function setFaults(l: ChaosLedger, faults: Record<string, unknown>): Promise<void> {
  const r = await l.post('/sandbox/faults', faults);
  if (r.status !== 200) throw new Error(`POST /sandbox/faults: ${r.status} ${r.text}`);
}

export async function clearFaults(l: ChaosLedger): Promise<void> {
  const res = await l.pool.request({ path: '/sandbox/faults', method: 'DELETE' });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`DELETE /sandbox/faults: ${res.statusCode}`);
}

export type { FaultStats } from '../src/sandbox/server/fault-injector.js';

export async function faultStats(l: ChaosLedger): Promise<FaultStats> {
  return (await l.get('/sandbox/fault-stats')) as FaultStats;
}

export type InvoiceSpec = {
  readonly reference: string;
  readonly amount: string;
  readonly currency: string;
};

/** One driver command: a few invoices in one transaction. */
export type DriverCommand = { readonly commandId: string; readonly invoices: InvoiceSpec[] };

/**
 * The seeded plan: `events` invoices in commands of 1 to 5, and `rejected` of them (spread over
 * the run) in the currency the effect's `ensure` refuses.
 */
export function invoicePlan(events: number, rejected: number, random: Random): DriverCommand[] {
  const rejectAt = new Set<number>();
  while (rejectAt.size < rejected) rejectAt.add(Math.floor(random.next() * events));
  const out: DriverCommand[] = [];
  let i = 0;
  while (i < events) {
    const size = Math.min(events - i, 1 + Math.floor(random.next() * 5));
    const invoices: InvoiceSpec[] = [];
    for (let k = 0; k < size; k++, i++) {
      const amount = `${10 + Math.floor(random.next() * 5000)}.00`;
      const currency = rejectAt.has(i) ? REJECTED_CURRENCY : random.next() < 0.8 ? 'USD' : 'CHF';
      invoices.push({ reference: `CH-${i + 1}`, amount, currency });
    }
    out.push({ commandId: `driver-${invoices[0]!.reference}`, invoices });
  }
  return out;
}

export type DriverStats = {
  /** Outcomes of the driver's own submit-and-wait attempts: `OK`, an error code, or `timeout`. */
  readonly outcomes: Map<string, number>;
  commands: number;
  retries: number;
};

/**
 * Submits one driver command until the ledger has it: an error or a lost answer is retried with
 * the same commandId (deduplicated from `anchor`), and DUPLICATE_COMMAND, or DUPLICATE_CONTRACT_KEY
 * after a lost answer, means an earlier attempt landed. Gives up after `maxAttempts` (the run then fails: its expected set is not on the ledger).
 */
export async function driveCommand(
  l: ChaosLedger,
  c: DriverCommand,
  anchor: number,
  stats: DriverStats,
  maxAttempts = 60,
): Promise<void> {
  const body = {
    commands: c.invoices.map((inv) => ({
      CreateCommand: {
        templateId: INVOICE,
        createArguments: {
          issuer: l.issuer,
          payer: l.payer,
          amount: inv.amount,
          currency: inv.currency,
          due: '2030-01-31',
          reference: inv.reference,
        },
      },
    })),
    commandId: c.commandId,
    userId: DRIVER_USER,
    actAs: [l.issuer],
    deduplicationPeriod: { DeduplicationOffset: { value: anchor } },
  };
  const mine = new Map<string, number>();
  const count = (k: string): void => {
    stats.outcomes.set(k, (stats.outcomes.get(k) ?? 0) + 1);
    mine.set(k, (mine.get(k) ?? 0) + 1);
  };
  let lastAnswer = '';
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (attempt > 1) {
      stats.retries += 1;
      await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** Math.min(attempt, 6))));
    }
    let answer: HttpAnswer;
    try {
      // A dropped completion leaves submit-and-wait hanging (20 s in the sandbox): time out sooner.
      answer = await l.post('/v2/commands/submit-and-wait', body, 3000);
    } catch {
      count('lost or timed out');
      continue;
    }
    if (answer.status === 200) {
      count('OK');
      stats.commands += 1;
      return;
    }
    const code = /"code"\s*:\s*"([A-Z_]+)"/.exec(answer.text)?.[1] ?? `HTTP ${answer.status}`;
    count(code);
    lastAnswer = `${answer.status} ${answer.text.slice(0, 300)}`;
    if (code === 'DUPLICATE_COMMAND') {
      stats.commands += 1;
      return;
    }
    // Canton interprets before it deduplicates: once an attempt whose answer was lost created
    // the invoices, a resubmission fails on their keys (issuer, reference) before it could be
    // called a duplicate. The references are unique to this command, so the keys are its own.
    if (code === 'DUPLICATE_CONTRACT_KEY' && (mine.get('lost or timed out') ?? 0) > 0) {
      stats.commands += 1;
      return;
    }
  }
  throw new Error(
    `the driver gave up on ${c.commandId} after ${maxAttempts} attempts ` +
      `(${[...mine].map(([k, v]) => `${k} ${v}`).join(', ')}; last answer: ${lastAnswer})`,
  );
}

export type ActiveContract = {
  readonly template: string;
  readonly reference: string;
  /** The offset of the transaction that created it. */
  readonly offset: number;
};

/** Active contracts of `templates` as the issuer sees them at the ledger end, with references. */
export async function activeContracts(
  l: ChaosLedger,
  templates: readonly string[],
): Promise<ActiveContract[]> {
  const client = await LedgerClient.create({ url: l.url });
  try {
    const offset = await client.ledgerEnd();
    const out: ActiveContract[] = [];
    for await (const element of client.activeContracts({
      activeAtOffset: offset,
      eventFormat: eventFormat({ parties: [l.issuer], templates }),
    })) {
      const entry = element.contractEntry;
      if (entry === undefined || !('JsActiveContract' in entry)) continue;
      const ev = entry.JsActiveContract.createdEvent;
      const entity = ev.templateId.split(':').slice(1).join(':');
      const reference = (ev.createArgument as { reference?: string } | null)?.reference ?? '';
      out.push({ template: `#${ev.packageName}:${entity}`, reference, offset: ev.offset });
    }
    return out;
  } finally {
    await client.close();
  }
}
