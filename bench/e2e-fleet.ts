import pg from 'pg';
import {
  removeBotConfig,
  spawnBot,
  waitFor,
  writeBotConfig,
  type BotChild,
  type LogLine,
} from './bot-child.js';
import { freePort } from './free-port.js';
import {
  bounded,
  createInvoice,
  INVOICE,
  ledgerEnd,
  startInvoiceLedger,
  submitAndWait,
  type InvoiceLedger,
} from './invoice-ledger.js';
import type { PgServer } from './pg-server.js';

/**
 * The e2e bench's fleet row: three `ledgerbot run` members with one `state.postgres` schema and
 * `fleet: { name }`. A fleet shares out rules, so the bench's one cancel rule becomes three, one
 * per currency, and the invoices come in the three currencies in turn (each rule a third of the
 * work); each rule's concurrency is a third of the single bot's, so the fleet has as many
 * commands in flight as the bot and the raw client. The members start together on the backlog
 * (ownership settles while they work, as it does when a fleet starts); done when N distinct
 * intents have finished, whichever member finished them.
 *
 * Take-over (round 1): once the backlog is done and the rules are split one per member, invoices
 * of one rule's currency keep coming at a fixed pace, its owner is SIGKILLed, and the bench takes
 * the time from the kill to the lease's new `acquired_at` (the database's clock, on this machine)
 * and to the first intent of that rule another member finishes (its log line's `time`).
 */
export const FLEET_SIZE = 3;
export const FLEET_LEASE_MS = 3_000;
const CURRENCIES = ['USD', 'EUR', 'CHF'] as const;
const ruleId = (currency: string): string => `cancel-${currency.toLowerCase()}`;
const TAKEN_RULE = ruleId(CURRENCIES[0]);

export type TakeOver = {
  readonly leasePeriodMs: number;
  /** From the SIGKILL to the lease's acquisition by another member; undefined: not within the wait. */
  readonly leaseTakenMs: number | undefined;
  /** From the SIGKILL to the first intent of the rule another member finished. */
  readonly workResumedMs: number | undefined;
  /** How long the bench waited for both, at most. */
  readonly waitedMs: number;
};

export type FleetRunResult = {
  readonly n: number;
  readonly wallSeconds: number;
  readonly submitSeconds: number;
  readonly takeover?: TakeOver;
};

function fleetRules(inFlight: number): string {
  const each = Math.ceil(inFlight / FLEET_SIZE);
  return `version: 1
rules:
${CURRENCIES.map(
  (c) => `  - id: ${ruleId(c)}
    on: { created: '${INVOICE}', party: issuer }
    when:
      - event.createArgument.currency == "${c}"
    then:
      - exercise:
          template: '${INVOICE}'
          contractId: '\${{ event.contractId }}'
          choice: Cancel
        actAs: [issuer]
    concurrency: ${each}
    rateLimit: { perSecond: 1000000, burst: 1000000 }
`,
).join('')}`;
}

async function createInvoicesIn(l: InvoiceLedger, prefix: string, n: number): Promise<void> {
  await bounded(n, 64, (i) =>
    submitAndWait(
      l,
      createInvoice(l, i, { amount: '100.00', currency: CURRENCIES[i % 3]!, prefix }),
    ),
  );
}

type Member = { readonly bot: BotChild; readonly port: number; readonly config: string };
type FleetStatus = { readonly instanceId: string; readonly running: readonly string[] };

async function statusOf(m: Member): Promise<FleetStatus | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${m.port}/status`, {
      signal: AbortSignal.timeout(2000),
    });
    return ((await res.json()) as { fleet?: FleetStatus }).fleet;
  } catch {
    return undefined; // starting, or between two bots
  }
}

/** Each member's /status once every member runs one rule of its own; undefined after `maxMs`. */
async function splitOnePerMember(
  members: readonly Member[],
  maxMs: number,
): Promise<FleetStatus[] | undefined> {
  const until = performance.now() + maxMs;
  while (performance.now() < until) {
    const statuses = await Promise.all(members.map(statusOf));
    const all = statuses.filter((s): s is FleetStatus => s !== undefined);
    const running = all.flatMap((s) => s.running);
    if (all.length === members.length && all.every((s) => s.running.length === 1)) {
      if (new Set(running).size === members.length) return all;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

/** One fleet run over N invoices; with `takeover`, the SIGKILL measurement after it. */
export async function fleetRun(
  round: number,
  n: number,
  inFlight: number,
  server: PgServer,
  takeover: boolean,
): Promise<FleetRunResult> {
  const l = await startInvoiceLedger();
  const members: Member[] = [];
  try {
    const begin = await ledgerEnd(l.url);
    await createInvoicesIn(l, `fleet${round}`, n);
    const url = await server.freshDatabase('fleet');
    const finished = new Map<string, { submitted: number; succeeded: number }>();
    let failed = 0;
    // The first intent of the taken rule each member finished after this moment.
    let killedAt = Number.POSITIVE_INFINITY;
    let resumedAt: number | undefined;
    const onLog = (line: LogLine): void => {
      if (line.msg !== 'intent finished') return;
      if (line.state !== 'succeeded' && line.state !== 'duplicate') {
        if (line.state !== 'pending') failed++;
        return;
      }
      const at = Date.parse(line.time);
      if (line.ruleId === TAKEN_RULE && at >= killedAt) resumedAt ??= at;
      const id = String(line.commandId);
      if (finished.has(id)) return;
      finished.set(id, {
        submitted: at - Number(line.recordToCompletionMs) + Number(line.recordToSubmitMs),
        succeeded: at,
      });
    };
    const rules = { 'cancel.yaml': fleetRules(inFlight) };
    const spawnedAt = performance.now();
    for (let i = 0; i < FLEET_SIZE; i++) {
      const port = await freePort();
      const config = writeBotConfig({
        url: l.url,
        userId: l.userId,
        parties: { issuer: l.issuer, payer: l.payer },
        rules,
        start: begin,
        maxInFlight: inFlight,
        http: port,
        postgres: { url, schema: 'ledgerbot' },
        fleet: { name: 'bench', leasePeriodMs: FLEET_LEASE_MS },
      });
      members.push({
        bot: spawnBot(config, { messages: ['intent finished'], onLog }),
        port,
        config,
      });
    }
    const done = await waitFor(() => finished.size + failed >= n, 600_000, 2);
    const wallSeconds = (performance.now() - spawnedAt) / 1000;
    if (!done || failed > 0) {
      throw new Error(`fleet: ${finished.size} of ${n} finished, ${failed} failed`);
    }
    const all = [...finished.values()];
    const first = Math.min(...all.map((t) => t.submitted));
    const last = Math.max(...all.map((t) => t.succeeded));
    const result = { n, wallSeconds, submitSeconds: (last - first) / 1000 };
    if (!takeover) return result;

    // Once each member runs one rule, kill the taken rule's owner.
    const statuses = await splitOnePerMember(members, 60_000);
    if (statuses === undefined) {
      throw new Error('fleet: the rules were not split one per member within 60 s');
    }
    const owner = statuses.findIndex((s) => s.running.includes(TAKEN_RULE));
    const victim = members[owner]!;
    const victimId = statuses[owner]!.instanceId;

    // Invoices of the taken rule's currency at 20/s, from before the kill until the end.
    let pacing = true;
    let k = 0;
    const pace = (async (): Promise<void> => {
      while (pacing) {
        const i = 3 * k++; // i % 3 === 0: the taken rule's currency
        await submitAndWait(
          l,
          createInvoice(l, i, { amount: '100.00', currency: CURRENCIES[0], prefix: 'takeover' }),
        );
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const db = new pg.Client({ connectionString: url });
    db.on('error', () => undefined);
    await db.connect();
    try {
      await new Promise((r) => setTimeout(r, 1000));
      killedAt = Date.now();
      victim.bot.child.kill('SIGKILL');
      const waitMs = 4 * FLEET_LEASE_MS + 10_000;
      const until = performance.now() + waitMs;
      let leaseTakenMs: number | undefined;
      while (performance.now() < until && (leaseTakenMs === undefined || resumedAt === undefined)) {
        const { rows } = await db.query<{ owner: string | null; acquired_at: Date }>(
          'SELECT owner, acquired_at FROM ledgerbot.lb_fleet_leases WHERE rule_id = $1',
          [TAKEN_RULE],
        );
        const row = rows[0];
        if (row?.owner != null && row.owner !== victimId) {
          leaseTakenMs = row.acquired_at.getTime() - killedAt;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return {
        ...result,
        takeover: {
          leasePeriodMs: FLEET_LEASE_MS,
          leaseTakenMs,
          workResumedMs: resumedAt === undefined ? undefined : resumedAt - killedAt,
          waitedMs: waitMs,
        },
      };
    } finally {
      pacing = false;
      await pace;
      await db.end();
    }
  } finally {
    for (const m of members) {
      await m.bot.stop();
      removeBotConfig(m.config);
    }
    await l.close();
  }
}
