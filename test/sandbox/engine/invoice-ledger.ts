import { readFileSync } from 'node:fs';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import type { JsCommands } from '../../../src/ledger/wire/wire-types.js';
import type { CommittedTransaction } from '../../../src/sandbox/engine/committed-transaction.js';
import { LedgerEngine } from '../../../src/sandbox/engine/ledger-engine.js';
import { loadModel } from '../../../src/sandbox/model/load-model.js';
import type { PackageModel } from '../../../src/sandbox/model/model-types.js';

export const INVOICES_FILE = 'examples/invoices/model.yaml';
export const invoicesModel: PackageModel = loadModel(
  readFileSync(INVOICES_FILE, 'utf8'),
  INVOICES_FILE,
);

export type InvoiceLedger = {
  engine: LedgerEngine;
  clock: FakeClock;
  issuer: string;
  payer: string;
  other: string;
  pkg: string;
};

/** An engine with the invoices model and three parties: Issuer, Payer, Other. */
export function invoiceLedger(seed = 1): InvoiceLedger {
  const clock = new FakeClock(Date.UTC(2025, 0, 15, 12));
  const engine = LedgerEngine.create({
    models: [invoicesModel],
    participantId: 'sandbox::1220' + 'ab'.repeat(32),
    random: new SeededRandom(seed),
    clock,
  });
  const party = (hint: string): string => {
    const r = engine.allocateParty(hint);
    if (!r.ok) throw new Error(r.error.cause);
    return r.value.party;
  };
  return {
    engine,
    clock,
    issuer: party('Issuer'),
    payer: party('Payer'),
    other: party('Other'),
    pkg: invoicesModel.packageId,
  };
}

let n = 0;
export function commands(
  actAs: string[],
  cmds: JsCommands['commands'],
  extra: Partial<JsCommands> = {},
): JsCommands {
  return { commands: cmds, commandId: `cmd-${++n}`, actAs, userId: 'tester', ...extra };
}

export function invoiceArgs(
  l: InvoiceLedger,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    issuer: l.issuer,
    payer: l.payer,
    amount: '999.99',
    currency: 'USD',
    due: '2025-02-01',
    reference: 'INV-1',
    ...extra,
  };
}

/** Commits an Invoice created by the issuer (user `u`), with `reference`. */
export function createInvoice(l: InvoiceLedger, reference: string): CommittedTransaction {
  const r = l.engine.submit(
    commands(
      [l.issuer],
      [
        {
          CreateCommand: {
            templateId: '#invoices:Invoice:Invoice',
            createArguments: invoiceArgs(l, { reference }),
          },
        },
      ],
    ),
    { userId: 'u' },
  );
  if (!r.ok) throw new Error(r.error.cause);
  return r.transaction;
}
