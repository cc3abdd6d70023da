import { AbortError } from '../../core/abort-error.js';
import type { Clock } from '../../core/clock.js';
import type { Random } from '../../core/random.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import type { Command } from '../../ledger/wire/wire-types.js';

export const DEMO_INVOICE_TEMPLATE = '#invoices:Invoice:Invoice';

/** What kind of invoice the driver issued, which decides what the rules should do with it. */
export type DemoInvoiceKind = 'small' | 'large' | 'foreign';

export type DemoInvoice = {
  readonly reference: string;
  readonly amount: string;
  readonly currency: string;
  readonly due: string;
  readonly kind: DemoInvoiceKind;
  readonly contractId: string;
  /** The payer accepted it by hand (large invoices, now and then). */
  paidByHand: boolean;
};

export type DemoDriverOptions = {
  readonly client: LedgerClient;
  readonly issuer: string;
  readonly payer: string;
  /** The Ledger API user the driver submits as (not the bot's). */
  readonly userId: string;
  readonly clock: Clock;
  readonly random: Random;
  /** Time between two business actions. */
  readonly paceMs: number;
  /** One readable line per business action. */
  readonly say: (text: string) => void;
};

/**
 * The demo's business activity: the issuer sends invoices over time (mostly small USD ones, which
 * the accept rule takes; some large or in EUR, which it leaves alone), and now and then the payer
 * accepts a large one by hand. Every accepted invoice is then the settle rule's business.
 */
export class DemoDriver {
  /** Every invoice issued, by contract id. */
  readonly invoices = new Map<string, DemoInvoice>();
  readonly #o: DemoDriverOptions;
  #next = 1;
  readonly #toPay: DemoInvoice[] = [];

  constructor(options: DemoDriverOptions) {
    this.#o = options;
  }

  /** Acts every `paceMs` until `signal` aborts; resolves then (an action under way finishes). */
  async run(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) return;
      const ready = this.#toPay[0];
      if (ready !== undefined && this.#o.random.next() < 0.4) {
        this.#toPay.shift();
        await this.#payByHand(ready);
      } else {
        await this.#issue();
      }
      try {
        await this.#o.clock.sleep(this.#o.paceMs, signal);
      } catch (err) {
        if (err instanceof AbortError) return;
        throw err;
      }
    }
  }

  async #issue(): Promise<void> {
    // The first two are small, so the automation shows at once.
    const r = this.#next <= 2 ? 0 : this.#o.random.next();
    const kind: DemoInvoiceKind = r < 0.6 ? 'small' : r < 0.85 ? 'large' : 'foreign';
    const amount =
      kind === 'large'
        ? 1200 + Math.floor(this.#o.random.next() * 87) * 100
        : 50 + Math.floor(this.#o.random.next() * 95) * 10;
    const currency = kind === 'foreign' ? 'EUR' : 'USD';
    const reference = `INV-${String(this.#next++).padStart(4, '0')}`;
    // Some large invoices are already overdue, for the nudge schedule rule to find.
    const overdue = kind === 'large' && this.#o.random.next() < 0.5;
    const dueInDays = overdue ? -5 : 30;
    const due = new Date(this.#o.clock.now() + dueInDays * 86_400_000).toISOString().slice(0, 10);
    const command: Command = {
      CreateCommand: {
        templateId: DEMO_INVOICE_TEMPLATE,
        createArguments: {
          issuer: this.#o.issuer,
          payer: this.#o.payer,
          amount: `${amount}.00`,
          currency,
          due,
          reference,
        },
      },
    };
    const res = await this.#o.client.submitAndWaitForTransaction({
      commands: [command],
      commandId: `demo-${reference}`,
      userId: this.#o.userId,
      actAs: [this.#o.issuer],
    });
    const created = res.transaction.events.find((e) => 'CreatedEvent' in e);
    if (created === undefined || !('CreatedEvent' in created)) return;
    const invoice: DemoInvoice = {
      reference,
      amount: `${amount}.00`,
      currency,
      due,
      kind,
      contractId: created.CreatedEvent.contractId,
      paidByHand: false,
    };
    this.invoices.set(invoice.contractId, invoice);
    // Overdue ones stay open, for the nudge rule; the others are paid by hand now and then.
    if (kind === 'large' && !overdue) this.#toPay.push(invoice);
    const note = overdue ? ' (large, overdue: left to a human)' : kindNote(kind);
    this.#o.say(`issuer sends ${reference} for ${invoice.amount} ${currency}${note}`);
  }

  async #payByHand(invoice: DemoInvoice): Promise<void> {
    await this.#o.client.submitAndWait({
      commands: [
        {
          ExerciseCommand: {
            templateId: DEMO_INVOICE_TEMPLATE,
            contractId: invoice.contractId,
            choice: 'Accept',
            choiceArgument: {},
          },
        },
      ],
      commandId: `demo-accept-${invoice.reference}`,
      userId: this.#o.userId,
      actAs: [this.#o.payer],
    });
    invoice.paidByHand = true;
    this.#o.say(
      `payer accepts ${invoice.reference} (${invoice.amount} ${invoice.currency}) by hand`,
    );
  }
}

function kindNote(kind: DemoInvoiceKind): string {
  switch (kind) {
    case 'small':
      return '';
    case 'large':
      return ' (large: left to a human)';
    case 'foreign':
      return ' (not USD: left to a human)';
  }
}
