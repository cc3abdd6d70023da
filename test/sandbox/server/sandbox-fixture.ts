import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import {
  startSandbox,
  type Sandbox,
  type StartSandboxOptions,
} from '../../../src/sandbox/start-sandbox.js';
import { specRoutes } from '../../support/spec-routes.js';

export const INVOICES_MODEL = fileURLToPath(
  new URL('../../../examples/invoices/model.yaml', import.meta.url),
);

export const PKG = '#invoices';

/** A sandbox with the invoices model, Alice (issuer) and Bob (payer), and fast list/checkpoint timings. */
export function startTestSandbox(options: StartSandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({
    models: [INVOICES_MODEL],
    parties: ['Alice', 'Bob', 'Carol'],
    users: ['alice-bot:Alice', 'bob-bot:Bob', 'carol-bot:Carol'],
    seed: 42,
    ...options,
    limits: {
      listWaitMs: 100,
      checkpointIntervalMs: 100,
      submitAndWaitTimeoutMs: 2_000,
      ...options.limits,
    },
  });
}

export type HttpAnswer = { status: number; body: unknown; text: string; contentType: string };

export async function call(
  sb: Sandbox,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const res = await fetch(sb.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  let parsed: unknown = undefined;
  if (contentType.includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: res.status, body: parsed, text, contentType };
}

let counter = 0;
export function nextCommandId(prefix = 'cmd'): string {
  counter++;
  return `${prefix}-${counter}-${Date.now().toString(36)}`;
}

/** An event of a transaction as the wire has it: `{ CreatedEvent: {...} }`, ... */
export type WireEvent = Record<string, Record<string, unknown>>;
export type WireTransaction = { readonly offset: number; readonly events: WireEvent[] };

/**
 * One command through `POST /v2/commands/submit-and-wait-for-transaction` (LEDGER_EFFECTS, the
 * given event format), its request and answer validated against the 3.5 spec. `tx` is the
 * transaction of a 200 (else undefined), `events` its events (else none).
 */
export async function submitForTransaction(
  sb: Sandbox,
  options: {
    readonly actAs: string;
    readonly userId: string;
    readonly command: unknown;
    readonly eventFormat: unknown;
    readonly idPrefix: string;
  },
): Promise<{
  status: number;
  body: Record<string, unknown>;
  tx: WireTransaction | undefined;
  events: WireEvent[];
}> {
  const path = '/v2/commands/submit-and-wait-for-transaction';
  const body = {
    commands: {
      commands: [options.command],
      commandId: nextCommandId(options.idPrefix),
      actAs: [options.actAs],
      userId: options.userId,
    },
    transactionFormat: {
      eventFormat: options.eventFormat,
      transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
    },
  };
  const routes = specRoutes('openapi-3.5');
  routes.assertRequest('POST', path, body);
  const r = await call(sb, 'POST', path, body);
  routes.assertResponse('POST', path, r.status, r.body);
  const tx =
    r.status === 200 ? (r.body as { transaction: WireTransaction }).transaction : undefined;
  return {
    status: r.status,
    body: r.body as Record<string, unknown>,
    tx,
    events: tx?.events ?? [],
  };
}

export function invoiceArgs(
  sb: Sandbox,
  reference: string,
  amount = '100.00',
): Record<string, unknown> {
  return {
    issuer: sb.parties.Alice,
    payer: sb.parties.Bob,
    amount,
    currency: 'USD',
    due: '2026-03-01',
    reference,
  };
}

export function createInvoiceCommands(
  sb: Sandbox,
  reference: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    commands: [
      {
        CreateCommand: {
          templateId: `${PKG}:Invoice:Invoice`,
          createArguments: invoiceArgs(sb, reference),
        },
      },
    ],
    commandId: nextCommandId('inv'),
    actAs: [sb.parties.Alice],
    userId: 'alice-bot',
    ...extra,
  };
}

export function wildcard(party: string): Record<string, unknown> {
  return {
    filtersByParty: {
      [party]: {
        cumulative: [
          { identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: false } } } },
        ],
      },
    },
    verbose: true,
  };
}

/** Opens a websocket, sends one request, collects frames until close or `count` frames. */
export function wsCollect(
  sb: Sandbox,
  path: string,
  request: unknown,
  opts: {
    count?: number;
    until?: (frame: unknown) => boolean;
    protocols?: string[];
    headers?: Record<string, string>;
    timeoutMs?: number;
  } = {},
): Promise<{ frames: unknown[]; closeCode: number; ws: WebSocket; protocol: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(
      sb.url.replace('http', 'ws') + path,
      opts.protocols ?? ['daml.ws.auth'],
      {
        headers: opts.headers ?? {},
      },
    );
    const frames: unknown[] = [];
    const timer = setTimeout(() => {
      ws.terminate();
      reject(
        new Error(
          `websocket timed out after ${frames.length} frames: ${JSON.stringify(frames).slice(0, 500)}`,
        ),
      );
    }, opts.timeoutMs ?? 5_000);
    let done = false;
    const finish = (code: number): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ frames, closeCode: code, ws, protocol: ws.protocol });
    };
    ws.on('open', () => ws.send(JSON.stringify(request)));
    ws.on('message', (data: Buffer) => {
      frames.push(JSON.parse(data.toString('utf8')));
      const last = frames[frames.length - 1];
      if (
        (opts.count !== undefined && frames.length >= opts.count) ||
        opts.until?.(last) === true
      ) {
        finish(-1);
        ws.close();
      }
    });
    ws.on('close', (code) => finish(code));
    ws.on('error', (err) => {
      if (!done) {
        clearTimeout(timer);
        done = true;
        reject(err);
      }
    });
  });
}

/** A keyless create (Automation:InvoiceAcceptor), so resubmitting the same command is legal. */
export function keylessCommands(
  sb: Sandbox,
  extra: Record<string, unknown> = {},
  party = 'Alice',
  userId = 'alice-bot',
): Record<string, unknown> {
  return {
    commands: [
      {
        CreateCommand: {
          templateId: `${PKG}:Automation:InvoiceAcceptor`,
          createArguments: { payer: sb.parties[party] },
        },
      },
    ],
    commandId: nextCommandId('keyless'),
    actAs: [sb.parties[party]],
    userId,
    ...extra,
  };
}
