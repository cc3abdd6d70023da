import type {
  Completion,
  CreatedEvent,
  Event,
  ExercisedEvent,
  JsGetActiveContractsResponse,
  JsGetEventsByContractIdResponse,
  JsTransaction,
} from '../../ledger/wire/wire-types.js';

// Canton's JSON API prints an absent optional of its API structures as `null` (circe codecs
// derived without dropNullValues, NOTES.md "Corrections" and §0.4); the engine builds the
// spec-generated wire types, where absent means a missing key. These functions are the one
// place that turns one into the other, just before a structure is serialised.

/** `T` with the keys `K` always present: their value or null. */
export type WithNulls<T, K extends keyof T> = Omit<T, K> & {
  [P in K]-?: Exclude<T[P], undefined> | null;
};

type JsInterfaceView = NonNullable<CreatedEvent['interfaceViews']>[number];

function interfaceView(v: JsInterfaceView): WithNulls<JsInterfaceView, 'viewValue'> {
  return { ...v, viewValue: v.viewValue ?? null };
}

/**
 * CreatedEvent: `contractKey` (no key) and a failed view's `viewValue` are null. In Canton's field
 * order (the proto's, as the OpenAPI spec lists them): the key right after the template id.
 */
export function createdEventWithNulls(e: CreatedEvent): WithNulls<CreatedEvent, 'contractKey'> {
  const { offset, nodeId, contractId, templateId, contractKey, ...rest } = e;
  const views = e.interfaceViews;
  return {
    offset,
    nodeId,
    contractId,
    templateId,
    contractKey: contractKey ?? null,
    ...rest,
    ...(views === undefined || views.length === 0
      ? {}
      : { interfaceViews: views.map(interfaceView) }),
  };
}

/**
 * ExercisedEvent: `interfaceId` is null unless the choice was exercised through an interface. In
 * Canton's field order: the interface right after the template id (see createdEventWithNulls).
 */
export function exercisedEventWithNulls(
  e: ExercisedEvent,
): WithNulls<ExercisedEvent, 'interfaceId'> {
  const { offset, nodeId, contractId, templateId, interfaceId, ...rest } = e;
  return { offset, nodeId, contractId, templateId, interfaceId: interfaceId ?? null, ...rest };
}

function eventWithNulls(e: Event): unknown {
  if ('CreatedEvent' in e) return { CreatedEvent: createdEventWithNulls(e.CreatedEvent) };
  if ('ExercisedEvent' in e) return { ExercisedEvent: exercisedEventWithNulls(e.ExercisedEvent) };
  return e;
}

export type CantonJsTransaction = WithNulls<
  Omit<JsTransaction, 'events'>,
  'traceContext' | 'externalTransactionHash' | 'paidTrafficCost'
> & { events: unknown[] };

/**
 * JsTransaction in Canton's field order; the sandbox has no trace propagation, no external
 * signing and no traffic, so those three are null unless the engine set them.
 */
export function transactionWithNulls(tx: JsTransaction): CantonJsTransaction {
  return {
    updateId: tx.updateId,
    // Unset proto strings are "" in Canton, never null.
    commandId: tx.commandId ?? '',
    workflowId: tx.workflowId ?? '',
    effectiveAt: tx.effectiveAt,
    events: tx.events.map(eventWithNulls),
    offset: tx.offset,
    synchronizerId: tx.synchronizerId,
    traceContext: tx.traceContext ?? null,
    recordTime: tx.recordTime,
    externalTransactionHash: tx.externalTransactionHash ?? null,
    paidTrafficCost: tx.paidTrafficCost ?? null,
  };
}

/** Completion: `traceContext` is null when the submission carried none. */
export function completionWithNulls(c: Completion): WithNulls<Completion, 'traceContext'> {
  return { ...c, traceContext: c.traceContext ?? null };
}

/** An active-contracts element: its created event with nulls. */
export function activeContractWithNulls(r: JsGetActiveContractsResponse): unknown {
  const entry = r.contractEntry;
  if (entry === undefined || !('JsActiveContract' in entry)) return r;
  const active = entry.JsActiveContract;
  return {
    ...r,
    contractEntry: {
      JsActiveContract: { ...active, createdEvent: createdEventWithNulls(active.createdEvent) },
    },
  };
}

/** events-by-contract-id: `archived` is null while the contract is active. */
export function eventsByContractIdWithNulls(r: JsGetEventsByContractIdResponse): unknown {
  return {
    created:
      r.created === undefined
        ? null
        : { ...r.created, createdEvent: createdEventWithNulls(r.created.createdEvent) },
    archived: r.archived ?? null,
  };
}
