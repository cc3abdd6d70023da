import { eventFormat } from '../../ledger/filters.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import type { Command } from '../../ledger/wire/wire-types.js';
import type { IntentEvent } from '../../runtime/submission-tracker.js';
import {
  decodeSubmissionPayload,
  SubmissionPayloadError,
} from '../../runtime/submission-payload.js';
import { NO_COLOUR, type Colour } from '../present/colour.js';
import { DEMO_INVOICE_TEMPLATE, type DemoInvoice } from './demo-driver.js';

const PAYMENT = '#invoices:Payment:Payment';
const RECEIPT = '#invoices:Payment:Receipt';

/** `12:00:01` in local time. */
export function clockText(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 8);
}

/**
 * Turns intent outcomes into one readable line each: which rule, what command on which invoice,
 * and what became of it. Contracts the driver did not create (payments) are looked up once.
 */
export class DemoAccount {
  readonly #client: LedgerClient;
  readonly #issuer: string;
  readonly #invoices: ReadonlyMap<string, DemoInvoice>;
  readonly #subjects = new Map<string, Promise<string>>();
  readonly #colour: Colour;

  constructor(
    client: LedgerClient,
    issuer: string,
    invoices: ReadonlyMap<string, DemoInvoice>,
    colour: Colour = NO_COLOUR,
  ) {
    this.#client = client;
    this.#issuer = issuer;
    this.#invoices = invoices;
    this.#colour = colour;
  }

  /** The line for a terminal state change or a retry; undefined for the steps in between. */
  async line(event: IntentEvent): Promise<string | undefined> {
    const result = resultText(event, this.#colour);
    if (result === undefined) return undefined;
    const payload = decodeSubmissionPayload(event.record.payload);
    const command: Command | undefined =
      payload instanceof SubmissionPayloadError ? undefined : payload.commands[0];
    const what = command === undefined ? 'a command' : await this.#describe(command);
    return `${event.ruleId.padEnd(26)} ${what.padEnd(44)} ${result}`;
  }

  async #describe(command: Command): Promise<string> {
    if ('CreateAndExerciseCommand' in command) {
      const c = command.CreateAndExerciseCommand;
      const target = (c.choiceArgument as { invoice?: unknown } | null)?.invoice;
      const on = typeof target === 'string' ? ` ${await this.#subject(target)}` : '';
      return `${c.choice}${on}`;
    }
    if ('ExerciseCommand' in command) {
      const c = command.ExerciseCommand;
      return `${c.choice} ${await this.#subject(c.contractId)}`;
    }
    if ('CreateCommand' in command) return `create ${entity(command.CreateCommand.templateId)}`;
    return Object.keys(command)[0] ?? 'a command';
  }

  #subject(contractId: string): Promise<string> {
    const invoice = this.#invoices.get(contractId);
    if (invoice !== undefined) {
      return Promise.resolve(`${invoice.reference} (${invoice.amount} ${invoice.currency})`);
    }
    let known = this.#subjects.get(contractId);
    if (known === undefined) {
      known = this.#client
        .eventsByContractId({ contractId, eventFormat: eventFormat({ parties: [this.#issuer] }) })
        .then((res) => {
          const created = res.created?.createdEvent;
          if (created === undefined) return shortId(contractId);
          const ref = (created.createArgument as { reference?: unknown } | null)?.reference;
          const name = entity(created.templateId).split(':').pop() ?? 'contract';
          return typeof ref === 'string' ? `${name.toLowerCase()} of ${ref}` : shortId(contractId);
        })
        .catch(() => shortId(contractId));
      this.#subjects.set(contractId, known);
    }
    return known;
  }
}

/** The result column (the last, so colour does not upset the padding). */
function resultText(event: IntentEvent, c: Colour): string | undefined {
  const code = event.error?.code;
  switch (event.to) {
    case 'succeeded':
      return c.green('done');
    case 'duplicate':
      return c.green('done (already on the ledger)');
    case 'rejected':
      return c.red(`rejected${code === undefined ? '' : `: ${code}`}`);
    case 'dead-lettered':
      return c.bold(c.red(`DEAD-LETTERED${code === undefined ? '' : `: ${code}`}`));
    case 'pending':
      return event.from !== null && code !== undefined
        ? c.yellow(`retrying after ${code}`)
        : undefined;
    case 'submitted':
      return undefined;
  }
}

function entity(templateId: string): string {
  return templateId.split(':').slice(1).join(':');
}

function shortId(contractId: string): string {
  return `contract ${contractId.slice(0, 12)}…`;
}

export type EffectsVerdict = {
  readonly ok: boolean;
  readonly lines: readonly string[];
};

/**
 * Reads the active contracts the issuer sees and checks them against what the rules should have
 * done with every invoice the driver issued: each accepted invoice (small USD ones by the rule,
 * large ones by hand) has exactly one receipt and no payment left; every other invoice is still
 * open and has neither.
 */
export async function verifyDemoEffects(
  client: LedgerClient,
  issuer: string,
  invoices: Iterable<DemoInvoice>,
  colour: Colour = NO_COLOUR,
): Promise<EffectsVerdict> {
  const offset = await client.ledgerEnd();
  const receipts = new Map<string, number>();
  const payments = new Map<string, number>();
  const open = new Set<string>();
  const format = eventFormat({
    parties: [issuer],
    templates: [DEMO_INVOICE_TEMPLATE, PAYMENT, RECEIPT],
  });
  for await (const element of client.activeContracts({
    activeAtOffset: offset,
    eventFormat: format,
  })) {
    const entry = element.contractEntry;
    if (entry === undefined || !('JsActiveContract' in entry)) continue;
    const event = entry.JsActiveContract.createdEvent;
    const key = `#${event.packageName}:${entity(event.templateId)}`;
    const reference = (event.createArgument as { reference?: unknown } | null)?.reference;
    const ref = typeof reference === 'string' ? reference : '';
    if (key === RECEIPT) receipts.set(ref, (receipts.get(ref) ?? 0) + 1);
    else if (key === PAYMENT) payments.set(ref, (payments.get(ref) ?? 0) + 1);
    else if (key === DEMO_INVOICE_TEMPLATE) open.add(ref);
  }
  const all = [...invoices];
  const byRule = all.filter((i) => i.kind === 'small');
  const byHand = all.filter((i) => i.paidByHand);
  const untouched = all.filter((i) => i.kind !== 'small' && !i.paidByHand);
  const settledOnce = (i: DemoInvoice): boolean =>
    receipts.get(i.reference) === 1 && !payments.has(i.reference) && !open.has(i.reference);
  const stillOpen = (i: DemoInvoice): boolean =>
    open.has(i.reference) && !receipts.has(i.reference) && !payments.has(i.reference);
  const known = new Set(all.map((i) => i.reference));
  const strays = [...receipts.keys(), ...payments.keys()].filter((r) => !known.has(r));
  const unsettled = [...payments.values()].reduce((a, b) => a + b, 0);

  const checks: { ok: boolean; text: string; bad: string[] }[] = [
    {
      ok: byRule.every(settledOnce),
      text: `${byRule.length} small USD invoices accepted by the rule and settled: one receipt each`,
      bad: byRule
        .filter((i) => !settledOnce(i))
        .map((i) => describeBad(i, receipts, payments, open)),
    },
    {
      ok: byHand.every(settledOnce),
      text: `${byHand.length} large invoices accepted by hand, settled by the rule: one receipt each`,
      bad: byHand
        .filter((i) => !settledOnce(i))
        .map((i) => describeBad(i, receipts, payments, open)),
    },
    {
      ok: untouched.every(stillOpen),
      text: `${untouched.length} invoices left to a human (large or not USD): still open, untouched`,
      bad: untouched
        .filter((i) => !stillOpen(i))
        .map((i) => describeBad(i, receipts, payments, open)),
    },
    {
      ok: unsettled === 0 && strays.length === 0,
      text: `${unsettled} payments left unsettled, ${strays.length} contracts nobody asked for`,
      bad: strays.map((r) => `${r}: not an invoice of this run`),
    },
  ];
  const lines: string[] = [];
  for (const c of checks) {
    lines.push(`${c.ok ? colour.green('✓') : colour.red('✗')} ${c.text}`);
    for (const b of c.bad.slice(0, 5)) lines.push(`    ${b}`);
    if (c.bad.length > 5) lines.push(`    … and ${c.bad.length - 5} more`);
  }
  return { ok: checks.every((c) => c.ok), lines };
}

function describeBad(
  i: DemoInvoice,
  receipts: ReadonlyMap<string, number>,
  payments: ReadonlyMap<string, number>,
  open: ReadonlySet<string>,
): string {
  return `${i.reference}: ${receipts.get(i.reference) ?? 0} receipt(s), ${payments.get(i.reference) ?? 0} payment(s), invoice ${open.has(i.reference) ? 'open' : 'closed'}`;
}
