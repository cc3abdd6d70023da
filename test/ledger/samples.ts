// Sample participant answers for the client tests. Each is validated against the spec's response
// schema by the test that replies with it (see mock-ledger.ts).
export const ALICE = 'Alice::1220aa';
export const BOB = 'Bob::1220aa';
export const SYNC = 'da::1220bb';
export const TEMPLATE = '#invoices:Invoice:Invoice';

export const createdEvent = {
  offset: 7,
  nodeId: 0,
  contractId: '00cafe',
  templateId: '1220pkg:Invoice:Invoice',
  contractKeyHash: '',
  createArgument: { issuer: ALICE, payer: BOB, amount: '10.0000000000', currency: 'USD' },
  createdEventBlob: '',
  interfaceViews: [],
  witnessParties: [ALICE],
  signatories: [ALICE],
  observers: [BOB],
  createdAt: '2025-01-27T15:30:37.291866Z',
  packageName: 'invoices',
  representativePackageId: '1220pkg',
  acsDelta: true,
};

export const transaction = {
  updateId: '1220upd',
  commandId: '',
  workflowId: '',
  effectiveAt: '2025-01-27T15:30:37.291866Z',
  events: [{ CreatedEvent: createdEvent }],
  offset: 7,
  synchronizerId: SYNC,
  recordTime: '2025-01-27T15:30:37.291866Z',
  paidTrafficCost: 0,
};

export const checkpoint = {
  offset: 8,
  synchronizerTimes: [{ synchronizerId: SYNC, recordTime: '2025-01-27T15:30:38Z' }],
};

export const activeContract = {
  workflowId: '',
  contractEntry: {
    JsActiveContract: { createdEvent, synchronizerId: SYNC, reassignmentCounter: 0 },
  },
};

export const completion = {
  commandId: 'lb-rule-abc',
  status: { code: 0, message: '', details: [] },
  updateId: '1220upd',
  userId: 'alice-bot',
  actAs: [ALICE],
  submissionId: 'b3c1',
  deduplicationPeriod: { DeduplicationOffset: { value: 5 } },
  offset: 9,
  synchronizerTime: { synchronizerId: SYNC, recordTime: '2025-01-27T15:30:39Z' },
  paidTrafficCost: 0,
};

export const partyDetails = {
  party: ALICE,
  isLocal: true,
  localMetadata: { resourceVersion: '0', annotations: {} },
  identityProviderId: '',
};

export const user = {
  id: 'alice-bot',
  primaryParty: ALICE,
  isDeactivated: false,
  metadata: { resourceVersion: '0', annotations: {} },
  identityProviderId: '',
};

export const canActAs = { kind: { CanActAs: { value: { party: ALICE } } } };
export const canReadAs = { kind: { CanReadAs: { value: { party: BOB } } } };

export const commands = {
  commands: [
    {
      CreateCommand: {
        templateId: TEMPLATE,
        createArguments: { issuer: ALICE, payer: BOB, amount: '10', currency: 'USD' },
      },
    },
  ],
  commandId: 'lb-rule-abc',
  actAs: [ALICE],
  userId: 'alice-bot',
  submissionId: 'b3c1',
  deduplicationPeriod: { DeduplicationOffset: { value: 5 } },
};

export const version = {
  version: '3.5.10',
  features: {
    experimental: {
      staticTime: { supported: false },
      commandInspectionService: { supported: true },
    },
    userManagement: { supported: true, maxRightsPerUser: 1000, maxUsersPageSize: 1000 },
    partyManagement: { maxPartiesPageSize: 10000 },
    offsetCheckpoint: { maxOffsetCheckpointEmissionDelay: { seconds: 75, nanos: 0 } },
    packageFeature: { maxVettedPackagesPageSize: 100 },
  },
};

export function cantonError(
  code: string,
  category: number,
  grpc: number,
  cause: string,
  context: Record<string, string> = {},
): Record<string, unknown> {
  return {
    code,
    cause,
    correlationId: 'corr-1',
    traceId: 'trace-1',
    context: { category: String(category), ...context },
    resources: [],
    errorCategory: category,
    grpcCodeValue: grpc,
    ...(category === 2 ? { retryInfo: '1 second' } : {}),
  };
}
