import { eventFormat, transactionFormat, updateFormat } from '../src/ledger/filters.js';
import type { JsTransaction } from '../src/ledger/wire/wire-types.js';
import { commandCpu, cpuSample, type CpuSample } from './command-cpu.js';
import type { E2eResult, E2eRun } from './e2e-bench.js';
import {
  bounded,
  cancelInvoice,
  createInvoice,
  createInvoices,
  INVOICE,
  ledgerEnd,
  openWs,
  submitAndWait,
  submitAsync,
  startInvoiceLedger,
  type InvoiceLedger,
} from './invoice-ledger.js';

/**
 * The e2e bench's raw client (a hand-written client with no rules and no journal: what the
 * sandbox and the machine give), and what it shares with the bot's runs: the update filter, the
 * paced phase's invoices and the percentiles of its latencies.
 */
export type Latency = { readonly p50: number; readonly p99: number; readonly max: number };

export type Paced = { readonly count: number; readonly perSecond: number };

export function invoiceFormat(l: InvoiceLedger): ReturnType<typeof updateFormat> {
  return updateFormat({
    transactions: transactionFormat(
      eventFormat({ parties: [l.issuer], templates: [INVOICE] }),
      'TRANSACTION_SHAPE_ACS_DELTA',
    ),
  });
}

/** Creates `paced.count` invoices one at a time at `paced.perSecond` (at most 8 outstanding). */
export async function createPaced(l: InvoiceLedger, paced: Paced, prefix: string): Promise<void> {
  const started = performance.now();
  await bounded(paced.count, 8, async (i) => {
    const due = started + (i * 1000) / paced.perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await submitAndWait(l, createInvoice(l, i, { amount: '100.00', currency: 'USD', prefix }));
  });
}

export function percentiles(xs: readonly number[]): Latency {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? NaN };
}

/** The completion after which a run's second half begins (see `E2eRun.secondHalf`). */
export function halfOf(n: number): number {
  return Math.ceil(n / 2);
}

export async function rawRun(
  round: number,
  n: number,
  paced: Paced | undefined,
  inFlight: number,
): Promise<{ run: E2eRun; latency?: NonNullable<E2eResult['latency']['raw']> }> {
  const l = await startInvoiceLedger();
  try {
    const begin = await ledgerEnd(l.url);
    await createInvoices(l, `raw${round}`, n);
    const started = performance.now();
    const waiting = new Map<string, () => void>();
    const completions = await openWs(
      l.url,
      '/v2/commands/completions',
      { userId: l.userId, parties: [l.issuer], beginExclusive: await ledgerEnd(l.url) },
      (frame) => {
        const c = (
          JSON.parse(frame) as {
            completionResponse: {
              Completion?: { value: { commandId: string; status?: { code: number } } };
            };
          }
        ).completionResponse.Completion?.value;
        if (c === undefined) return;
        if ((c.status?.code ?? 0) !== 0) throw new Error(`raw: ${c.commandId} failed`);
        waiting.get(c.commandId)?.();
      },
    );
    const queue: { cid: string; recordMs: number }[] = [];
    let waiters: (() => void)[] = [];
    const wakeAll = (): void => {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    };
    const updates = await openWs(
      l.url,
      '/v2/updates',
      { beginExclusive: begin, updateFormat: invoiceFormat(l) },
      (frame) => {
        const tx = (JSON.parse(frame) as { update: { Transaction?: { value: JsTransaction } } })
          .update.Transaction?.value;
        if (tx === undefined) return;
        const recordMs = Date.parse(tx.recordTime);
        for (const e of tx.events) {
          if ('CreatedEvent' in e) queue.push({ cid: e.CreatedEvent.contractId, recordMs });
        }
        wakeAll();
      },
    );
    let firstSubmit = 0;
    let lastCompletion = 0;
    let cpuFrom: CpuSample | undefined;
    let cpuHalf: CpuSample | undefined;
    let halfAt = 0;
    let finished = 0;
    let taken = 0;
    let target = n;
    // Paced phase: ms from the transaction's recordTime to the submission and to the completion.
    const toSubmit: number[] = [];
    const toCompletion: number[] = [];
    const worker = async (timed: boolean): Promise<void> => {
      while (taken < target) {
        const item = queue.shift();
        if (item === undefined) {
          await new Promise<void>((r) => waiters.push(r));
          continue;
        }
        if (++taken === target) wakeAll();
        const commandId = `raw-${item.cid}`;
        const completed = new Promise<void>((r) => waiting.set(commandId, r));
        if (firstSubmit === 0) {
          firstSubmit = performance.now();
          cpuFrom = cpuSample(process.pid, l.child.pid);
        }
        const submittedAt = Date.now();
        await submitAsync(l, cancelInvoice(l, item.cid, commandId));
        await completed;
        waiting.delete(commandId);
        if (timed) {
          toSubmit.push(submittedAt - item.recordMs);
          toCompletion.push(Date.now() - item.recordMs);
        } else {
          lastCompletion = performance.now();
          if (++finished === halfOf(n)) {
            halfAt = lastCompletion;
            cpuHalf = cpuSample(process.pid, l.child.pid);
          }
        }
      }
    };
    const workers = (timed: boolean): Promise<void>[] =>
      Array.from({ length: inFlight }, () => worker(timed));
    await Promise.all(workers(false));
    const cpuTo = cpuSample(process.pid, l.child.pid);
    const cpu = commandCpu(cpuFrom, cpuTo, n);
    const halfCpu = commandCpu(cpuHalf, cpuTo, n - halfOf(n));
    const run: E2eRun = {
      ...(cpu === undefined ? {} : { cpu }),
      client: 'raw',
      round,
      n,
      wallSeconds: (lastCompletion - started) / 1000,
      submitSeconds: (lastCompletion - firstSubmit) / 1000,
      secondHalf: {
        seconds: (lastCompletion - halfAt) / 1000,
        ...(halfCpu === undefined ? {} : { cpu: halfCpu }),
      },
    };
    if (paced !== undefined) {
      target = n + paced.count;
      await Promise.all([createPaced(l, paced, `rawpaced${round}`), ...workers(true)]);
    }
    updates.close();
    completions.close();
    if (paced === undefined) return { run };
    return {
      run,
      latency: {
        count: toCompletion.length,
        toSubmit: percentiles(toSubmit),
        toCompletion: percentiles(toCompletion),
      },
    };
  } finally {
    await l.close();
  }
}
