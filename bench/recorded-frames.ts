import type { CreatedEvent } from '../src/ledger/wire/wire-types.js';
import { loadRules } from '../src/rules/load-rules.js';
import { planSubscription } from '../src/runtime/subscription-plan.js';
import { benchRules, type RuleShape } from './bench-rules.js';
import {
  bounded,
  createInvoice,
  INVOICE,
  ledgerEnd,
  openWs,
  readAll,
  submitForTransaction,
  type InvoiceLedger,
} from './invoice-ledger.js';

/**
 * Update frames recorded from the sandbox, as the bot's websocket receives them (the text of each
 * JsGetUpdatesResponse): an invoicing workload (invoices created; then accepted through the
 * InvoiceAcceptor, reminded, cancelled or left open; half the payments settled), read back with
 * the filter the bot derives from the bench rules (`planSubscription`), once per shape.
 */
export type Recording = {
  readonly parties: { readonly issuer: string; readonly payer: string };
  readonly frames: Readonly<Record<RuleShape, readonly string[]>>;
  /** Completion stream frames (JsCompletionStreamResponse text) of the workload's commands. */
  readonly completions: readonly string[];
  readonly transactions: number;
  /**
   * The sandbox's packages (`GET /v2/packages/{id}`: the id and the payload bytes), so that a
   * participant replaying the frames serves the packages their template ids name: the bot reads
   * them to check its rules.
   */
  readonly packages: readonly RecordedPackage[];
};

export type RecordedPackage = { readonly packageId: string; readonly payload: Uint8Array };

async function recordPackages(url: string): Promise<RecordedPackage[]> {
  const list = (await (await fetch(`${url}/v2/packages`)).json()) as { packageIds: string[] };
  const out: RecordedPackage[] = [];
  for (const packageId of list.packageIds) {
    const res = await fetch(`${url}/v2/packages/${packageId}`);
    if (!res.ok) throw new Error(`GET /v2/packages/${packageId}: ${res.status}`);
    out.push({ packageId, payload: new Uint8Array(await res.arrayBuffer()) });
  }
  return out;
}

const CURRENCY = ['USD', 'USD', 'EUR', 'USD', 'CHF', 'EUR', 'USD', 'USD'];

export function parsePlanFormat(shape: RuleShape, parties: Recording['parties']): unknown {
  const { ruleSet, problems } = loadRules([{ path: 'bench.yaml', text: benchRules(100, shape) }], {
    parties,
  });
  if (problems.length > 0) throw new Error(`bench rules: ${JSON.stringify(problems[0])}`);
  return planSubscription(ruleSet, parties).updateFormat;
}

export async function recordFrames(l: InvoiceLedger, invoices: number): Promise<Recording> {
  const parties = { issuer: l.issuer, payer: l.payer };
  const contractIds: string[] = new Array<string>(invoices);
  let transactions = 0;
  await bounded(invoices, 16, async (i) => {
    const cents = String(i % 100).padStart(2, '0');
    const tx = await submitForTransaction(
      l,
      createInvoice(l, i, {
        amount: `${(i * 37) % 2000}.${cents}`.replace(/^0\.00$/, '1.00'),
        currency: CURRENCY[i % CURRENCY.length]!,
        prefix: 'INV',
      }),
    );
    transactions++;
    const created = tx.events.find((e) => 'CreatedEvent' in e) as { CreatedEvent: CreatedEvent };
    contractIds[i] = created.CreatedEvent.contractId;
  });
  await bounded(invoices, 16, async (i) => {
    const cid = contractIds[i]!;
    const commandId = `follow-${i}`;
    switch (i % 6) {
      case 0:
      case 1:
      case 2: {
        const tx = await submitForTransaction(l, {
          commands: [
            {
              CreateAndExerciseCommand: {
                templateId: '#invoices:Automation:InvoiceAcceptor',
                createArguments: { payer: l.payer },
                choice: 'AcceptInvoice',
                choiceArgument: { invoice: cid },
              },
            },
          ],
          commandId,
          actAs: [l.payer],
        });
        transactions++;
        if (i % 2 === 0) {
          const payment = tx.events.find(
            (e) => 'CreatedEvent' in e && e.CreatedEvent.templateId.endsWith(':Payment:Payment'),
          ) as { CreatedEvent: CreatedEvent } | undefined;
          if (payment === undefined) throw new Error('no Payment created by AcceptInvoice');
          await submitForTransaction(l, {
            commands: [
              {
                ExerciseCommand: {
                  templateId: '#invoices:Payment:Payment',
                  contractId: payment.CreatedEvent.contractId,
                  choice: 'Settle',
                  choiceArgument: {},
                },
              },
            ],
            commandId: `settle-${i}`,
            actAs: [l.issuer],
          });
          transactions++;
        }
        return;
      }
      case 3:
      case 4:
        await submitForTransaction(l, {
          commands: [
            {
              ExerciseCommand: {
                templateId: INVOICE,
                contractId: cid,
                choice: i % 6 === 3 ? 'Remind' : 'Cancel',
                choiceArgument: i % 6 === 3 ? { note: i % 12 === 3 ? null : `ref ${i}` } : {},
              },
            },
          ],
          commandId,
          actAs: [l.issuer],
        });
        transactions++;
        return;
      default:
        return;
    }
  });
  const end = await ledgerEnd(l.url);
  const frames = {} as Record<RuleShape, readonly string[]>;
  for (const shape of ['ledger-effects', 'acs-delta'] as const) {
    frames[shape] = await readAll(l.url, '/v2/updates', {
      beginExclusive: 0,
      endInclusive: end,
      updateFormat: parsePlanFormat(shape, parties),
    });
  }
  const completions: string[] = [];
  const ws = await openWs(
    l.url,
    '/v2/commands/completions',
    { userId: l.userId, parties: [l.issuer, l.payer], beginExclusive: 0 },
    (f) => completions.push(f),
  );
  for (let i = 0; i < 100 && completions.length < Math.min(transactions, 200); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  ws.close();
  return { parties, frames, completions, transactions, packages: await recordPackages(l.url) };
}
