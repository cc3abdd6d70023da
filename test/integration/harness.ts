import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../src/core/logger.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import type { Command } from '../../src/ledger/wire/wire-types.js';
import type { RuleSet } from '../../src/rules/compiled-rule.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import type { BotLedger } from '../../src/runtime/bot-ledger.js';
import { createBot, type Bot, type BotOptions } from '../../src/runtime/bot.js';
import {
  startOpsServer,
  type OpsServer,
  type OpsServerOptions,
} from '../../src/runtime/ops/ops-server.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { IntentState, Store } from '../../src/store/store.js';
import type { RunUntil } from '../support/run-until.js';
import { withScope, type TestScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';

// The generic helpers live in test/support/; the integration tests have always imported them
// from here.
export { freePort } from '../support/free-port.js';
export { tempDir, type TempDir } from '../support/temp-dir.js';
export { waitFor };

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const INVOICES_MODEL = join(ROOT, 'examples/invoices/model.yaml');
export const AUDIT_MODEL = join(ROOT, 'test/integration/fixtures/audit.model.yaml');
export const RULES_DIR = join(ROOT, 'test/integration/fixtures/rules');

export const INVOICE = '#invoices:Invoice:Invoice';
export const PAYMENT = '#invoices:Payment:Payment';
export const RECEIPT = '#invoices:Payment:Receipt';
export const SEEN = '#audit:Audit:Seen';

/** The sandbox of one test, with the demo parties and a client for the test's own reads. */
export type TestLedger = {
  readonly sandbox: Sandbox;
  readonly url: string;
  readonly client: LedgerClient;
  readonly parties: { readonly issuer: string; readonly payer: string };
  /** POST /sandbox/faults (merged over the active ones). */
  faults(faults: Record<string, unknown>): Promise<void>;
  clearFaults(): Promise<void>;
  /** POST /sandbox/prune. */
  prune(offset: number): Promise<void>;
  close(): Promise<void>;
};

export async function startTestLedger(
  seed: number,
  options: { readonly idleTimeout?: string } = {},
): Promise<TestLedger> {
  const sandbox = await startSandbox({
    models: [INVOICES_MODEL, AUDIT_MODEL],
    parties: ['issuer', 'payer'],
    // The user the fixture configs name: a bot with ledger.auth set checks it exists at start.
    users: [{ id: 'ledgerbot', actAs: ['issuer', 'payer'] }],
    seed,
    ...options,
  });
  const client = await LedgerClient.create({ url: sandbox.url });
  const post = async (path: string, method: string, body?: unknown): Promise<void> => {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    await res.body?.cancel();
  };
  return {
    sandbox,
    url: sandbox.url,
    client,
    parties: { issuer: sandbox.parties.issuer!, payer: sandbox.parties.payer! },
    faults: (f) => post('/sandbox/faults', 'POST', f),
    clearFaults: () => post('/sandbox/faults', 'DELETE'),
    prune: (offset) => post('/sandbox/prune', 'POST', { offset }),
    close: async () => {
      await client.close();
      await sandbox.stop();
    },
  };
}

export type InvoiceSpec = {
  readonly reference: string;
  readonly amount: string;
  readonly currency: string;
};

/**
 * A fixed, seeded mix of invoices: about two thirds small USD ones (the accept rule takes them),
 * the rest large or in another currency (left alone).
 */
export function invoicePlan(count: number, seed: number, prefix = 'INV'): InvoiceSpec[] {
  const random = new SeededRandom(seed);
  const out: InvoiceSpec[] = [];
  for (let i = 0; i < count; i++) {
    const r = random.next();
    const small = r < 0.65;
    const amount = small ? 10 + Math.floor(random.next() * 980) : 1000 + Math.floor(r * 9000);
    const currency = small || random.next() < 0.5 ? 'USD' : 'CHF';
    out.push({ reference: `${prefix}-${i + 1}`, amount: `${amount}.00`, currency });
  }
  return out;
}

export function isSmall(spec: InvoiceSpec): boolean {
  return spec.currency === 'USD' && Number(spec.amount) < 1000;
}

/** What the fixture rules must leave on the ledger once they have handled every invoice. */
export type Effects = {
  /** Audit records (one per invoice). */
  readonly seen: number;
  /** Receipts (one per accepted invoice). */
  readonly receipts: number;
  /** Payments not yet settled (none once the settle rule caught up). */
  readonly payments: number;
  /** Invoices nobody accepted. */
  readonly invoices: number;
};

export function expectedEffects(plan: readonly InvoiceSpec[]): Effects {
  const small = plan.filter(isSmall).length;
  return { seen: plan.length, receipts: small, payments: 0, invoices: plan.length - small };
}

/**
 * Creates the invoices as the issuer (user `driver`, not the bot's), `perCommand` invoices per
 * transaction, with submit-and-wait. Call it while no submit faults are active: the driver does
 * not retry.
 */
export async function issueInvoices(
  ledger: TestLedger,
  plan: readonly InvoiceSpec[],
  perCommand = 1,
  due = '2030-01-31',
): Promise<void> {
  // Anchored at the ledger end: the default (maximum) period would reach below a pruned offset.
  const anchor = await ledger.client.ledgerEnd();
  for (let i = 0; i < plan.length; i += perCommand) {
    const batch = plan.slice(i, i + perCommand);
    const commands: Command[] = batch.map((spec) => ({
      CreateCommand: {
        templateId: INVOICE,
        createArguments: {
          issuer: ledger.parties.issuer,
          payer: ledger.parties.payer,
          amount: spec.amount,
          currency: spec.currency,
          due,
          reference: spec.reference,
        },
      },
    }));
    await ledger.client.submitAndWait({
      commands,
      commandId: `driver-${batch[0]!.reference}`,
      userId: 'driver',
      actAs: [ledger.parties.issuer],
      deduplicationPeriod: { DeduplicationOffset: { value: anchor } },
    });
  }
}

/** What is on the ledger now: contracts per template, and references seen more than once. */
export type LedgerCounts = Effects & {
  /** References with more than one audit record or receipt: a double effect. */
  readonly duplicates: readonly string[];
};

/** Counts the active contracts of the fixture templates, as the issuer sees them. */
export async function countContracts(ledger: TestLedger): Promise<LedgerCounts> {
  const offset = await ledger.client.ledgerEnd();
  const counts = { seen: 0, receipts: 0, payments: 0, invoices: 0 };
  const refs = new Map<string, number>();
  const format = eventFormat({
    parties: [ledger.parties.issuer],
    templates: [INVOICE, PAYMENT, RECEIPT, SEEN],
  });
  for await (const element of ledger.client.activeContracts({
    activeAtOffset: offset,
    eventFormat: format,
  })) {
    const entry = element.contractEntry;
    if (entry === undefined || !('JsActiveContract' in entry)) continue;
    const event = entry.JsActiveContract.createdEvent;
    const entity = event.templateId.split(':').slice(1).join(':');
    const key = `#${event.packageName}:${entity}`;
    const reference = (event.createArgument as { reference?: string } | null)?.reference ?? '';
    if (key === SEEN) counts.seen += 1;
    else if (key === RECEIPT) counts.receipts += 1;
    else if (key === PAYMENT) counts.payments += 1;
    else if (key === INVOICE) counts.invoices += 1;
    if (key === SEEN || key === RECEIPT) {
      const k = `${key}/${reference}`;
      refs.set(k, (refs.get(k) ?? 0) + 1);
    }
  }
  const duplicates = [...refs].filter(([, n]) => n > 1).map(([k]) => k);
  return { ...counts, duplicates };
}

/**
 * The completions the ledger gave the bot's user, per outcome: `OK` or the error code (read from
 * the status message, which Canton starts with the code). Includes every replica's.
 */
export async function completionOutcomes(
  ledger: TestLedger,
  userId = 'ledgerbot',
  beginExclusive = 0,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let from = beginExclusive;
  for (let page = 0; page < 100; page++) {
    const elements = await ledger.client.listCompletions(
      { userId, parties: [ledger.parties.issuer, ledger.parties.payer], beginExclusive: from },
      { limit: 200 },
    );
    for (const e of elements) {
      const r = e.completionResponse;
      if (r === undefined) continue;
      if ('Completion' in r) {
        const c = r.Completion.value;
        const code =
          (c.status?.code ?? 0) === 0
            ? 'OK'
            : (/^[A-Z_]+/.exec(c.status?.message ?? '')?.[0] ?? 'ERROR');
        out.set(code, (out.get(code) ?? 0) + 1);
        from = Math.max(from, c.offset);
      } else if ('OffsetCheckpoint' in r) {
        from = Math.max(from, r.OffsetCheckpoint.value.offset);
      }
    }
    if (elements.length < 200) return out;
  }
  throw new Error('more than 100 pages of completions');
}

/** The counts show exactly the expected effects, or a duplicate (no use waiting on then). */
export function effectsReached(expected: Effects): (counts: LedgerCounts) => boolean {
  return (c) =>
    c.duplicates.length > 0 ||
    (c.seen === expected.seen &&
      c.receipts === expected.receipts &&
      c.payments === expected.payments &&
      c.invoices === expected.invoices);
}

/** `runUntil`'s wait for the expected effects on the run's ledger. */
export function untilEffects(
  expected: Effects,
  timeoutMs: number,
): Omit<RunUntil<{ readonly ledger: TestLedger }, LedgerCounts, never>, 'start' | 'then'> {
  return {
    probe: ({ ledger }) => countContracts(ledger),
    until: effectsReached(expected),
    what: `the ledger effects ${JSON.stringify(expected)}`,
    timeoutMs,
  };
}

/** Waits until the ledger shows exactly the expected effects (and no duplicate), then returns. */
export async function waitForEffects(
  ledger: TestLedger,
  expected: Effects,
  timeoutMs = 30_000,
): Promise<LedgerCounts> {
  const { probe, until, what } = untilEffects(expected, timeoutMs);
  return waitFor(() => probe({ ledger }), until, timeoutMs, what);
}

export function loadFixtureRules(
  parties: Readonly<Record<string, string>>,
  dir = RULES_DIR,
): RuleSet {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ path: join(dir, f), text: readFileSync(join(dir, f), 'utf8') }));
  return loadRulesOrThrow(files, { parties });
}

/** A bot in this process, on its own client and store. */
export type InProcessBot = {
  readonly bot: Bot;
  readonly store: Store;
  readonly client: LedgerClient;
  /** What the bot's `async/submit` calls got back: `ok`, or the error code / transport failure. */
  readonly submitOutcomes: Map<string, number>;
  /** Intents per state in the bot's journal. */
  states(): Record<IntentState, number>;
  /** Stops the bot, then closes its client and store. Idempotent. */
  stop(): Promise<void>;
};

export type InProcessBotOptions = {
  readonly stateDir: string;
  readonly seed: number;
  readonly rules?: RuleSet;
  readonly logger?: Logger;
  /** The client's websocket ping interval (default: the client's, 25 s). */
  readonly pingIntervalMs?: number;
} & Partial<Omit<BotOptions, 'ledger' | 'store' | 'rules' | 'parties' | 'random'>>;

export async function startInProcessBot(
  ledger: TestLedger,
  options: InProcessBotOptions,
): Promise<InProcessBot> {
  const { stateDir, seed, rules, pingIntervalMs, ...rest } = options;
  const client = await LedgerClient.create({
    url: ledger.url,
    ...(pingIntervalMs === undefined ? {} : { pingIntervalMs }),
  });
  const store = openSqliteStore({ dir: stateDir });
  const submitOutcomes = new Map<string, number>();
  const count = (key: string): void => {
    submitOutcomes.set(key, (submitOutcomes.get(key) ?? 0) + 1);
  };
  const botLedger: BotLedger = {
    submit: async (commands, opts) => {
      try {
        const r = await client.submit(commands, opts);
        count('ok');
        return r;
      } catch (err) {
        if (err instanceof LedgerApiError) count(err.error.code);
        else if (err instanceof LedgerTransportError) count(`transport:${err.failure}`);
        else count('other');
        throw err;
      }
    },
    ledgerEnd: (opts) => client.ledgerEnd(opts),
    updates: (req, opts) => client.updates(req, opts),
    completions: (req, opts) => client.completions(req, opts),
    eventsByContractId: (req, opts) => client.eventsByContractId(req, opts),
    updateByOffset: (req, opts) => client.updateByOffset(req, opts),
    listCompletions: (req, opts) => client.listCompletions(req, opts),
    latestPrunedOffsets: (opts) => client.latestPrunedOffsets(opts),
    activeContracts: (req, opts) => client.activeContracts(req, opts),
  };
  const bot = createBot({
    userId: 'ledgerbot',
    submission: { maxInFlight: 32, completionTimeoutMs: 5_000 },
    streamBackoff: { initialMs: 20, maxMs: 200 },
    stopGraceMs: 5_000,
    ...rest,
    rules: rules ?? loadFixtureRules(ledger.parties),
    parties: ledger.parties,
    ledger: botLedger,
    store,
    closeStore: false,
    random: new SeededRandom(seed),
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      try {
        await bot.stop();
      } finally {
        await client.close();
        store.close();
      }
    })();
    return stopping;
  };
  try {
    await bot.start();
  } catch (err) {
    await stop();
    throw err;
  }
  return { bot, store, client, submitOutcomes, states: () => store.countByState(), stop };
}

/** The ops API of an in-process bot (its bot, store and client), on a free port. */
export function startBotOps(
  bot: InProcessBot,
  options: Partial<Omit<OpsServerOptions, 'bot' | 'store' | 'ledger' | 'port'>> = {},
): Promise<OpsServer> {
  return startOpsServer({
    bot: bot.bot,
    store: bot.store,
    ledger: bot.client,
    port: 0,
    ...options,
  });
}

/** Every intent of the journal is terminal. */
export function allTerminal(states: Record<IntentState, number>): boolean {
  return states.pending === 0 && states.submitted === 0;
}

/** Every intent is terminal, and there are at least `intents` of them. */
export function settled(intents: number): (states: Record<IntentState, number>) => boolean {
  return (s) =>
    allTerminal(s) && s.succeeded + s.duplicate + s.rejected + s['dead-lettered'] >= intents;
}

/**
 * Two dead letters in `stateDir`'s store: invoices D-1 and D-2 are issued, then a bot on `rules`
 * (e.g. AUDIT_RULE_FEW_RETRIES) has every submission turned away (retryable) until its retries
 * run out. The faults are cleared and the bot stopped before it returns the journal's states.
 */
export async function seedTwoDeadLetters(
  ledger: TestLedger,
  stateDir: string,
  rules: RuleSet,
): Promise<Record<IntentState, number>> {
  await issueInvoices(ledger, [
    { reference: 'D-1', amount: '10.00', currency: 'USD' },
    { reference: 'D-2', amount: '20.00', currency: 'USD' },
  ]);
  return withScope(async (seeding) => {
    await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
    seeding.defer(undefined, () => ledger.clearFaults());
    const bot = seeding.own(
      await startInProcessBot(ledger, { stateDir, seed: 4, rules, start: { kind: 'begin' } }),
    );
    return waitFor(
      () => bot.states(),
      (s) => allTerminal(s) && s['dead-lettered'] === 2,
      20_000,
      'two dead letters',
    );
  });
}

/**
 * A replica that reads the ledger from the beginning, stopped with `scope`. Its completion
 * timeout is short, so commands whose completion was dropped are resubmitted after they
 * committed.
 */
export async function startReplica(
  scope: TestScope,
  ledger: TestLedger,
  seed: number,
  rules?: RuleSet,
): Promise<InProcessBot> {
  return scope.own(
    await startInProcessBot(ledger, {
      stateDir: scope.tempDir(),
      seed,
      start: { kind: 'begin' },
      ...(rules === undefined ? {} : { rules }),
      submission: { maxInFlight: 32, completionTimeoutMs: 400 },
    }),
  );
}

/**
 * The audit rule with few, fast retries: one plain create per invoice (a second landing would
 * show as a second Seen contract), dead-lettered after two attempts.
 */
export const AUDIT_RULE_FEW_RETRIES = `version: 1
rules:
  - id: audit-invoices
    on: { created: '#invoices:Invoice:Invoice', party: issuer }
    then:
      - create:
          template: '#audit:Audit:Seen'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: '\${{ event.createArgument.reference }}'
            amount: '\${{ event.createArgument.amount }}'
        actAs: [issuer]
    retry: { maxAttempts: 2, initialDelay: 20ms, maxDelay: 50ms, deadline: 2m }
`;
