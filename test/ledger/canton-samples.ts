// What a real Canton 3.5 participant sends, written from its source and NOTES.md ("Corrections",
// §0.4, §2.2, §6.6, §8.1), NOT from the sandbox's output and NOT trimmed to pass the spec:
// - absent optionals of API structures are `null`, never missing (circe configured codecs);
// - inside Daml values a non-trailing None is `null` and a trailing None is left out
//   (removeTrailingNonesInRecords); `Optional (Optional a)` is an array;
// - error resources read "ErrorResource(CONTRACT_ID)" for errors that came through gRPC and
//   "CONTRACT_ID" for errors made in the JSON layer.
// The spec validators would reject most of these; that difference is the point.

export const ALICE = 'Alice::1220f2fe29866fd6a0009ecc8a64ccdc09f1958bd0f801166baaee469d1251b2eb72';
export const BOB = 'Bob::1220f2fe29866fd6a0009ecc8a64ccdc09f1958bd0f801166baaee469d1251b2eb72';
export const SYNC = 'da::1220be58c29e65de40bf273be1dc2b266d43a9a002ea5b18955aeef7aac881bb471a';
const PKG = '6c3d40bc4ed1d9fca9d6a1c5f41e6c2b7a48c2f4cbd6a3e9f1a0b7c8d9e0f1a2';
export const CID = `00${'ab'.repeat(32)}ca111220${'cd'.repeat(32)}`;

/**
 * `Invoice` with fields issuer, payer, amount, note : Optional Text, currency,
 * reminder : Optional (Optional Date), memo : Optional Text. note is None but not trailing (null),
 * reminder is `Some None` (`[[]]`), memo is a trailing None (left out).
 */
export const invoiceArgument = {
  issuer: ALICE,
  payer: BOB,
  amount: '999.9900000000',
  note: null,
  currency: 'USD',
  reminder: [[]],
};

export const createdEvent = {
  offset: 7,
  nodeId: 0,
  contractId: CID,
  templateId: `${PKG}:Invoice:Invoice`,
  contractKey: null,
  contractKeyHash: '',
  createArgument: invoiceArgument,
  createdEventBlob: '',
  interfaceViews: [],
  witnessParties: [ALICE],
  signatories: [ALICE],
  observers: [BOB],
  createdAt: '2025-01-27T15:30:37.291866Z',
  packageName: 'invoices',
  representativePackageId: PKG,
  acsDelta: true,
};

/** A keyed contract: the key is a record whose first field is a None (kept as null). */
export const keyedCreatedEvent = {
  ...createdEvent,
  offset: 8,
  contractKey: { scope: null, owner: ALICE },
  contractKeyHash: 'q83vEjRWeJA=',
  interfaceViews: [
    {
      interfaceId: `${PKG}:Invoice:Payable`,
      viewStatus: { code: 0, message: '', details: [] },
      viewValue: { amount: '999.9900000000', dueBy: null },
    },
    {
      interfaceId: `${PKG}:Invoice:Auditable`,
      viewStatus: { code: 13, message: 'view computation failed', details: [] },
      viewValue: null,
    },
  ],
};

export const exercisedEvent = {
  offset: 9,
  nodeId: 1,
  contractId: CID,
  templateId: `${PKG}:Invoice:Invoice`,
  interfaceId: null,
  choice: 'Remind',
  choiceArgument: { channel: null, urgent: false },
  actingParties: [ALICE],
  consuming: false,
  witnessParties: [ALICE],
  lastDescendantNodeId: 1,
  // The choice returns Optional Text and returned None.
  exerciseResult: null,
  packageName: 'invoices',
  implementedInterfaces: [],
  acsDelta: false,
};

/** An Invoice archived by a consuming exercise, as an ACS_DELTA transaction shows it. */
export const archivedEvent = {
  offset: 11,
  nodeId: 0,
  contractId: CID,
  templateId: `${PKG}:Invoice:Invoice`,
  witnessParties: [ALICE],
  packageName: 'invoices',
  implementedInterfaces: [],
};

export const transaction = {
  updateId: '1220e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7',
  commandId: '',
  workflowId: '',
  effectiveAt: '2025-01-27T15:30:37.291866Z',
  events: [{ CreatedEvent: createdEvent }, { ExercisedEvent: exercisedEvent }],
  offset: 9,
  synchronizerId: SYNC,
  traceContext: null,
  recordTime: '2025-01-27T15:30:37.291866Z',
  externalTransactionHash: null,
  paidTrafficCost: null,
};

/** A transaction whose trace context has a null tracestate (the docs' example). */
export const tracedTransaction = {
  ...transaction,
  offset: 10,
  events: [{ CreatedEvent: { ...keyedCreatedEvent, offset: 10 } }],
  traceContext: {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    tracestate: null,
  },
};

export const checkpoint = {
  offset: 11,
  synchronizerTimes: [{ synchronizerId: SYNC, recordTime: '2025-01-27T15:30:38Z' }],
};

export const completion = {
  commandId: 'lb-remind-1f2e',
  status: { code: 0, message: '', details: [] },
  updateId: transaction.updateId,
  userId: 'ledgerbot',
  actAs: [ALICE],
  submissionId: '5a1b2c3d-0000-4000-8000-000000000001',
  deduplicationPeriod: { DeduplicationOffset: { value: 5 } },
  traceContext: null,
  offset: 12,
  synchronizerTime: { synchronizerId: SYNC, recordTime: '2025-01-27T15:30:39Z' },
  paidTrafficCost: null,
};

/** events-by-contract-id for an active contract. */
export const eventsOfActiveContract = {
  created: { createdEvent, synchronizerId: SYNC },
  archived: null,
};

export function activeContract(offset: number): Record<string, unknown> {
  return {
    workflowId: '',
    contractEntry: {
      JsActiveContract: {
        createdEvent: { ...createdEvent, offset, contractId: `${CID}${offset}` },
        synchronizerId: SYNC,
        reassignmentCounter: 0,
      },
    },
  };
}

/** The pages of active-contracts-page: the last one says `"nextPageToken": null`. */
export const acsPages = [
  {
    activeContracts: [activeContract(3), activeContract(4)],
    activeAtOffset: 20,
    nextPageToken: 'cGFnZTI=',
  },
  { activeContracts: [activeContract(5)], activeAtOffset: 20, nextPageToken: null },
];

/** A contention error from the gRPC side: resource in the case-class form, absent fields null. */
export const contractNotFound = {
  code: 'CONTRACT_NOT_FOUND',
  cause: `Contract could not be found with id ${CID}`,
  correlationId: '5a1b2c3d-0000-4000-8000-000000000001',
  traceId: '0af7651916cd43dd8448eb211c80319c',
  context: {
    participant: 'participant1',
    tid: '0af7651916cd43dd8448eb211c80319c',
    category: '11',
    definite_answer: 'false',
  },
  resources: [['ErrorResource(CONTRACT_ID)', CID]],
  errorCategory: 11,
  grpcCodeValue: 5,
  retryInfo: null,
  definiteAnswer: null,
};

/** The same kind of resource from an error made in the JSON layer: bare. */
export const jsonLayerNotFound = {
  ...contractNotFound,
  correlationId: null,
  traceId: null,
  context: {},
  resources: [['CONTRACT_ID', CID]],
  grpcCodeValue: null,
};

/** Canton 3.5's answer to a command value it cannot transcode (an Int64 sent as a number). */
export const transcodingFailure = {
  code: 'LEDGER_API_INTERNAL_ERROR',
  cause: 'Expected String but got Num(42.0)',
  correlationId: null,
  traceId: null,
  context: {},
  resources: [],
  errorCategory: 4,
  grpcCodeValue: 13,
  retryInfo: null,
  definiteAnswer: false,
};

function streamAuthError(code: string, cause: string): Record<string, unknown> {
  return {
    code,
    cause,
    correlationId: null,
    traceId: '7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d',
    context: { participant: 'participant1', category: '2', definite_answer: 'false' },
    resources: [],
    errorCategory: 2,
    grpcCodeValue: 10,
    retryInfo: '1 second',
    definiteAnswer: null,
  };
}

/** The frame that ends an open stream when its token expires. */
export const accessTokenExpired = streamAuthError(
  'ACCESS_TOKEN_EXPIRED',
  'Claims were valid until 2025-01-27T15:35:00Z, current time is 2025-01-27T15:35:00.001Z',
);

/** The frame that ends an open stream when the user's rights change. */
export const staleStreamAuthorization = streamAuthError(
  'STALE_STREAM_AUTHORIZATION',
  'Stale stream authorization. Retry quickly.',
);
