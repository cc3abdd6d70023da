import type { JsTransaction, TransactionFormat } from '../../ledger/wire/wire-types.js';
import type { CommittedTransaction } from '../engine/committed-transaction.js';
import type { SubmissionOutcome } from './command-pipeline.js';
import { transactionJson } from './frames.js';
import { asObject, parseTransactionFormat, type JsonObject } from './request-parsing.js';
import type { Handler, RouteContext, RouteResult } from './route-table.js';
import type { SandboxContext } from './sandbox-context.js';
import { SandboxApiError } from './sandbox-api-error.js';
import { authorizeEventFormat } from './stream-openers.js';

const EMPTY_OBJECT: RouteResult = { status: 200, json: '{}' };

/** The fault: the command goes through, the caller never hears back. */
function loseResponse(ctx: RouteContext): RouteResult {
  ctx.req.socket.destroy();
  return { handled: true };
}

async function settle(
  s: SandboxContext,
  outcome: Promise<SubmissionOutcome>,
  submissionId: string,
): Promise<SubmissionOutcome & { kind: 'accepted' }> {
  let timer: ReturnType<SandboxContext['clock']['setTimeout']> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = s.clock.setTimeout(() => {
      const err = new SandboxApiError(
        'REQUEST_TIME_OUT',
        'Timed out while awaiting for a completion corresponding to a command submission.',
        { definiteAnswer: false },
      );
      err.correlationId = submissionId;
      reject(err);
    }, s.limits.submitAndWaitTimeoutMs);
  });
  try {
    const result = await Promise.race([
      outcome.then((o) =>
        // A dropped completion leaves submit-and-wait waiting, as Canton's tracker would.
        o.kind === 'accepted' && o.completion === undefined ? new Promise<never>(() => {}) : o,
      ),
      timeout,
    ]);
    if (result.kind === 'rejected') throw result.error;
    return result;
  } finally {
    if (timer !== undefined) s.clock.clearTimeout(timer);
  }
}

/** Default of submit-and-wait-for-transaction: ACS_DELTA, wildcard for actAs+readAs, verbose. */
function defaultTransactionFormat(commands: JsonObject): TransactionFormat {
  const parties = new Set<string>([
    ...((commands.actAs as string[] | undefined) ?? []),
    ...((commands.readAs as string[] | undefined) ?? []),
  ]);
  const filtersByParty: Record<string, object> = {};
  for (const p of parties) {
    filtersByParty[p] = {
      cumulative: [
        { identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: false } } } },
      ],
    };
  }
  return {
    eventFormat: { filtersByParty, verbose: true },
    transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
  };
}

/** A transaction with no visible events still answers with its header. */
export function bareTransaction(tx: CommittedTransaction): JsTransaction {
  return {
    updateId: tx.updateId,
    commandId: tx.commandId,
    workflowId: tx.workflowId,
    effectiveAt: tx.effectiveAt,
    events: [],
    offset: tx.offset,
    synchronizerId: tx.synchronizerId,
    recordTime: tx.effectiveAt,
  };
}

export function commandRoutes(s: SandboxContext): Record<string, Handler> {
  return {
    'POST /v2/commands/async/submit': (ctx) => {
      s.pipeline.submit(asObject(ctx.body), ctx.principal);
      return s.faults.loseSubmitResponse() ? loseResponse(ctx) : EMPTY_OBJECT;
    },
    'POST /v2/commands/submit-and-wait': async (ctx) => {
      const sub = s.pipeline.submit(asObject(ctx.body), ctx.principal);
      const lose = s.faults.loseSubmitResponse();
      const done = await settle(s, sub.outcome, sub.submissionId);
      if (lose) return loseResponse(ctx);
      return {
        status: 200,
        json: `{"updateId":${JSON.stringify(done.transaction.updateId)},"completionOffset":${done.transaction.offset}}`,
      };
    },
    'POST /v2/commands/submit-and-wait-for-transaction': async (ctx) => {
      const body = asObject(ctx.body);
      const commands = asObject(body.commands);
      const format =
        body.transactionFormat === undefined || body.transactionFormat === null
          ? defaultTransactionFormat(commands)
          : parseTransactionFormat(body.transactionFormat, 'transactionFormat');
      authorizeEventFormat(s, ctx.principal, format.eventFormat);
      const sub = s.pipeline.submit(commands, ctx.principal);
      const lose = s.faults.loseSubmitResponse();
      const done = await settle(s, sub.outcome, sub.submissionId);
      if (lose) return loseResponse(ctx);
      const tx =
        s.engine.projectTransaction(done.transaction, format) ?? bareTransaction(done.transaction);
      return { status: 200, json: `{"transaction":${transactionJson(tx)}}` };
    },
  };
}
