import { Pool } from 'undici';
import WebSocket from 'ws';
import type { JsTransaction } from '../src/ledger/wire/wire-types.js';
import { startSandboxProcess, type SandboxProcess } from './bench-support.js';

/**
 * The sandbox the end-to-end sections run against: its own process (the built CLI) with the
 * invoices model, the parties Issuer and Payer and the user `bench` that can act as both. No
 * auth, no faults. Helpers to submit and to read its streams.
 */
export type InvoiceLedger = SandboxProcess & {
  readonly issuer: string;
  readonly payer: string;
  readonly userId: string;
  readonly pool: Pool;
  close(): Promise<void>;
};

export const INVOICE = '#invoices:Invoice:Invoice';
export const BENCH_USER = 'bench';

export async function startInvoiceLedger(nodeArgs: readonly string[] = []): Promise<InvoiceLedger> {
  const { url, child } = await startSandboxProcess(
    [
      '--model',
      'examples/invoices/model.yaml',
      '--party',
      'Issuer',
      '--party',
      'Payer',
      '--user',
      `${BENCH_USER}:Issuer,Payer`,
      '--seed',
      '1',
    ],
    nodeArgs,
  );
  const parties = (await (await fetch(`${url}/v2/parties`)).json()) as {
    partyDetails: { party: string }[];
  };
  const find = (hint: string): string =>
    parties.partyDetails.find((p) => p.party.startsWith(`${hint}::`))!.party;
  const pool = new Pool(url, { connections: 64 });
  return {
    url,
    child,
    issuer: find('Issuer'),
    payer: find('Payer'),
    userId: BENCH_USER,
    pool,
    close: async () => {
      await pool.close();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

export async function ledgerEnd(url: string): Promise<number> {
  return ((await (await fetch(`${url}/v2/state/ledger-end`)).json()) as { offset: number }).offset;
}

/** Opens a websocket stream, sends `request` and hands every text frame to `onFrame`. */
export function openWs(
  url: string,
  path: string,
  request: unknown,
  onFrame: (frame: string) => void,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace('http', 'ws') + path, ['daml.ws.auth']);
    ws.on('open', () => {
      ws.send(JSON.stringify(request));
      resolve(ws);
    });
    ws.on('message', (d: Buffer) => onFrame(d.toString('utf8')));
    ws.on('error', reject);
  });
}

/** Every frame of a bounded stream (the request carries `endInclusive`), until the server closes. */
export function readAll(url: string, path: string, request: unknown): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const frames: string[] = [];
    const ws = new WebSocket(url.replace('http', 'ws') + path, ['daml.ws.auth']);
    ws.on('open', () => ws.send(JSON.stringify(request)));
    ws.on('message', (d: Buffer) => frames.push(d.toString('utf8')));
    ws.on('close', () => resolve(frames));
    ws.on('error', reject);
  });
}

export type Commands = {
  readonly commands: readonly unknown[];
  readonly commandId: string;
  readonly actAs: readonly string[];
};

async function post(l: InvoiceLedger, path: string, body: unknown): Promise<string> {
  const res = await l.pool.request({
    path,
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  return text;
}

/** One transaction, synchronously (ACS_DELTA view of the submitting parties). */
export async function submitForTransaction(l: InvoiceLedger, c: Commands): Promise<JsTransaction> {
  const text = await post(l, '/v2/commands/submit-and-wait-for-transaction', {
    commands: { ...c, userId: l.userId },
  });
  return (JSON.parse(text) as { transaction: JsTransaction }).transaction;
}

export async function submitAndWait(l: InvoiceLedger, c: Commands): Promise<void> {
  await post(l, '/v2/commands/submit-and-wait', { ...c, userId: l.userId });
}

export async function submitAsync(l: InvoiceLedger, c: Commands): Promise<void> {
  await post(l, '/v2/commands/async/submit', { ...c, userId: l.userId });
}

/** Runs `task(0..count-1)` with at most `inFlight` at once. */
export async function bounded(
  count: number,
  inFlight: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
}

export function createInvoice(
  l: InvoiceLedger,
  i: number,
  fields: { readonly amount: string; readonly currency: string; readonly prefix: string },
): Commands {
  return {
    commands: [
      {
        CreateCommand: {
          templateId: INVOICE,
          createArguments: {
            issuer: l.issuer,
            payer: l.payer,
            amount: fields.amount,
            currency: fields.currency,
            due: `2026-0${1 + (i % 9)}-1${i % 10}`,
            reference: `${fields.prefix}-${i}`,
          },
        },
      },
    ],
    commandId: `${fields.prefix}-create-${i}`,
    actAs: [l.issuer],
  };
}

/** The one exercise both end-to-end clients submit per invoice: the issuer cancels it. */
export function cancelInvoice(l: InvoiceLedger, contractId: string, commandId: string): Commands {
  return {
    commands: [
      {
        ExerciseCommand: {
          templateId: INVOICE,
          contractId,
          choice: 'Cancel',
          choiceArgument: {},
        },
      },
    ],
    commandId,
    actAs: [l.issuer],
  };
}

/** Creates invoices `prefix-from` … `prefix-(from+count-1)`, 64 at a time, synchronously. */
export async function createInvoices(
  l: InvoiceLedger,
  prefix: string,
  count: number,
): Promise<void> {
  await bounded(count, 64, (i) =>
    submitAndWait(l, createInvoice(l, i, { amount: '100.00', currency: 'USD', prefix })),
  );
}
