import { Pool } from 'undici';
import WebSocket from 'ws';
import { startSandboxProcess, type SandboxProcess } from './bench-support.js';

/**
 * Sandbox throughput: async submits per second with completions streamed back (1, 8 and 64 in
 * flight), and updates per second delivered to 1 and 10 tailing subscribers. The sandbox runs in
 * its own process (the built CLI), as users run it. Every phase is bounded in count and time.
 */
export type SandboxBenchRow = {
  readonly scenario: string;
  readonly count: number;
  readonly seconds: number;
  readonly perSecond: number;
};

type Started = SandboxProcess & { readonly alice: string };

async function startInvoiceSandbox(): Promise<Started> {
  const { url, child } = await startSandboxProcess(
    [
      '--model',
      'examples/invoices/model.yaml',
      '--party',
      'Alice',
      '--user',
      'alice-bot:Alice',
      '--seed',
      '1',
    ],
    // e.g. BENCH_SANDBOX_NODE_ARGS=--cpu-prof to profile the sandbox process.
    (process.env.BENCH_SANDBOX_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
  );
  const parties = (await (await fetch(`${url}/v2/parties`)).json()) as {
    partyDetails: { party: string }[];
  };
  const alice = parties.partyDetails.find((p) => p.party.startsWith('Alice::'))!.party;
  return { url, child, alice };
}

let seq = 0;
function command(alice: string): string {
  seq++;
  return JSON.stringify({
    commands: [
      {
        CreateAndExerciseCommand: {
          templateId: '#invoices:Invoice:Invoice',
          createArguments: {
            issuer: alice,
            payer: alice,
            amount: '10.00',
            currency: 'USD',
            due: '2026-03-01',
            reference: `B-${seq}`,
          },
          choice: 'Cancel',
          choiceArgument: {},
        },
      },
    ],
    commandId: `bench-${seq}`,
    actAs: [alice],
    userId: 'alice-bot',
  });
}

function openWs(
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

async function ledgerEnd(url: string): Promise<number> {
  return ((await (await fetch(`${url}/v2/state/ledger-end`)).json()) as { offset: number }).offset;
}

/** Async submits with `inFlight` outstanding; each slot waits for its completion on the stream. */
async function submitsWithCompletions(
  s: Started,
  inFlight: number,
  maxCount: number,
  maxMs: number,
): Promise<SandboxBenchRow> {
  const pool = new Pool(s.url, { connections: Math.min(inFlight, 64), pipelining: 1 });
  const waiting = new Map<string, () => void>();
  const ws = await openWs(
    s.url,
    '/v2/commands/completions',
    { userId: 'alice-bot', parties: [s.alice], beginExclusive: await ledgerEnd(s.url) },
    (frame) => {
      const m = /"commandId":"([^"]+)"/.exec(frame);
      if (m !== null) waiting.get(m[1]!)?.();
    },
  );
  let done = 0;
  const started = performance.now();
  const deadline = started + maxMs;
  const worker = async (): Promise<void> => {
    while (done < maxCount && performance.now() < deadline) {
      const body = command(s.alice);
      const id = `bench-${seq}`;
      const completed = new Promise<void>((resolve) => waiting.set(id, resolve));
      const res = await pool.request({
        path: '/v2/commands/async/submit',
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`submit failed: ${res.statusCode}`);
      await completed;
      waiting.delete(id);
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  ws.close();
  await pool.close();
  return {
    scenario: `async submit + completion stream, ${inFlight} in flight`,
    count: done,
    seconds,
    perSecond: done / seconds,
  };
}

/** `subscribers` tailing /v2/updates while commands are pushed with 64 in flight. */
async function updatesToSubscribers(
  s: Started,
  subscribers: number,
  count: number,
  maxMs: number,
): Promise<SandboxBenchRow> {
  const begin = await ledgerEnd(s.url);
  let received = 0;
  const target = subscribers * count;
  let resolveAll: () => void = () => undefined;
  const all = new Promise<void>((r) => (resolveAll = r));
  const request = {
    beginExclusive: begin,
    updateFormat: {
      includeTransactions: {
        eventFormat: { filtersByParty: { [s.alice]: {} }, verbose: true },
        transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
      },
    },
  };
  const sockets = await Promise.all(
    Array.from({ length: subscribers }, () =>
      openWs(s.url, '/v2/updates', request, (frame) => {
        if (frame.startsWith('{"update":{"Transaction"')) {
          received++;
          if (received >= target) resolveAll();
        }
      }),
    ),
  );
  const pool = new Pool(s.url, { connections: 64 });
  const started = performance.now();
  const deadline = started + maxMs;
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (sent < count && performance.now() < deadline) {
      sent++;
      const res = await pool.request({
        path: '/v2/commands/async/submit',
        method: 'POST',
        body: command(s.alice),
        headers: { 'content-type': 'application/json' },
      });
      await res.body.text();
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  await Promise.race([
    all,
    new Promise((r) => setTimeout(r, Math.max(0, deadline - performance.now()) + 2_000)),
  ]);
  const seconds = (performance.now() - started) / 1000;
  for (const ws of sockets) ws.close();
  await pool.close();
  return {
    scenario: `updates delivered to ${subscribers} subscriber(s)`,
    count: received,
    seconds,
    perSecond: received / seconds,
  };
}

export async function runSandboxBench(options: {
  maxMs: number;
  maxCount: number;
}): Promise<SandboxBenchRow[]> {
  const s = await startInvoiceSandbox();
  try {
    const rows: SandboxBenchRow[] = [];
    // Warm-up: JIT and connection setup (shorter in the smoke run's short measurements).
    await submitsWithCompletions(s, 8, 2_000, Math.min(2_000, options.maxMs));
    for (const inFlight of [1, 8, 64])
      rows.push(await submitsWithCompletions(s, inFlight, options.maxCount, options.maxMs));
    for (const subs of [1, 10])
      rows.push(
        await updatesToSubscribers(s, subs, Math.min(options.maxCount, 5_000), options.maxMs),
      );
    return rows;
  } finally {
    s.child.kill('SIGTERM');
  }
}
