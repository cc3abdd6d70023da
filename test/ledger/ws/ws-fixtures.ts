// Realistic frames of the JSON Ledger API websockets (NOTES.md §2.2, §2.4, §6.2), built to pass the
// strict 3.5 AsyncAPI schemas. Canton renders absent optionals as null; the spec has no nulls,
// so those fields are left out here.
import type { UpdateFormat } from '../../../src/ledger/wire/wire-types.js';

export const ALICE = 'Alice::1220f2fe29866fd6a0009ecc8a64ccdc09f1958bd0f801166baaee469d1251b2eb72';
export const SYNC = 'da::1220be58c29e65de40bf273be1dc2b266d43a9a002ea5b18955aeef7aac881bb471a';
const PKG = '6c3d40bc4ed1d9fca9d6a1c5f41e6c2b7a48c2f4cbd6a3e9f1a0b7c8d9e0f1a2';

export const UPDATE_FORMAT: UpdateFormat = {
  includeTransactions: {
    eventFormat: {
      filtersByParty: {
        [ALICE]: {
          cumulative: [
            {
              identifierFilter: {
                TemplateFilter: {
                  value: {
                    templateId: '#invoices:Invoice:Invoice',
                    includeCreatedEventBlob: false,
                  },
                },
              },
            },
          ],
        },
      },
      verbose: true,
    },
    transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
  },
};

function hex(n: number, len = 64): string {
  return n.toString(16).padStart(len, '0');
}

export function createdEvent(offset: number, nodeId = 0): Record<string, unknown> {
  return {
    offset,
    nodeId,
    contractId: `00${hex(offset * 100 + nodeId)}ca111220${hex(offset)}`,
    templateId: `${PKG}:Invoice:Invoice`,
    contractKeyHash: '',
    createArgument: {
      issuer: ALICE,
      payer: ALICE,
      amount: '999.9900000000',
      currency: 'USD',
      due: '2026-02-01',
      lines: [{ description: 'consulting', quantity: '3' }],
    },
    createdEventBlob: '',
    interfaceViews: [],
    witnessParties: [ALICE],
    signatories: [ALICE],
    observers: [],
    createdAt: '2026-01-05T09:30:37.291866Z',
    packageName: 'invoices',
    representativePackageId: PKG,
    acsDelta: true,
  };
}

export function transactionFrame(offset: number): Record<string, unknown> {
  return {
    update: {
      Transaction: {
        value: {
          updateId: `1220${hex(offset)}`,
          commandId: '',
          workflowId: '',
          effectiveAt: '2026-01-05T09:30:37.291866Z',
          events: [
            { CreatedEvent: createdEvent(offset, 0) },
            {
              ArchivedEvent: {
                offset,
                nodeId: 1,
                contractId: `00${hex(offset - 1)}ca111220${hex(offset)}`,
                templateId: `${PKG}:Invoice:Invoice`,
                witnessParties: [ALICE],
                packageName: 'invoices',
                implementedInterfaces: [],
              },
            },
          ],
          offset,
          synchronizerId: SYNC,
          traceContext: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
          recordTime: '2026-01-05T09:30:37.301866Z',
          paidTrafficCost: 0,
        },
      },
    },
  };
}

export function checkpointFrame(offset: number): Record<string, unknown> {
  return {
    update: {
      OffsetCheckpoint: {
        value: {
          offset,
          synchronizerTimes: [{ synchronizerId: SYNC, recordTime: '2026-01-05T09:31:00.000000Z' }],
        },
      },
    },
  };
}

export function reassignmentFrame(offset: number): Record<string, unknown> {
  return {
    update: {
      Reassignment: {
        value: {
          updateId: `1220${hex(offset)}`,
          commandId: '',
          workflowId: '',
          offset,
          events: [
            {
              JsAssignmentEvent: {
                source: 'other::1220aa',
                target: SYNC,
                reassignmentId: `0x${hex(offset, 16)}`,
                submitter: ALICE,
                reassignmentCounter: 1,
                createdEvent: createdEvent(offset),
              },
            },
          ],
          recordTime: '2026-01-05T09:32:00.000000Z',
          synchronizerId: SYNC,
          paidTrafficCost: 0,
        },
      },
    },
  };
}

export function topologyFrame(offset: number): Record<string, unknown> {
  return {
    update: {
      TopologyTransaction: {
        value: {
          updateId: `1220${hex(offset)}`,
          offset,
          synchronizerId: SYNC,
          recordTime: '2026-01-05T09:33:00.000000Z',
          events: [
            {
              event: {
                ParticipantAuthorizationAdded: {
                  value: {
                    partyId: ALICE,
                    participantId: 'participant1::1220f2fe29866fd6',
                    participantPermission: 'PARTICIPANT_PERMISSION_SUBMISSION',
                  },
                },
              },
            },
          ],
        },
      },
    },
  };
}

export function completionFrame(
  offset: number,
  commandId = `lb-accept-${offset}`,
): Record<string, unknown> {
  return {
    completionResponse: {
      Completion: {
        value: {
          commandId,
          status: { code: 0, message: '', details: [] },
          updateId: `1220${hex(offset)}`,
          userId: 'alice-bot',
          actAs: [ALICE],
          submissionId: 'b3c1e2d4-5f60-4a71-8b92-a3b4c5d6e7f8',
          deduplicationPeriod: { DeduplicationOffset: { value: offset - 1 } },
          traceContext: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
          offset,
          synchronizerTime: { synchronizerId: SYNC, recordTime: '2026-01-05T09:30:37.301866Z' },
          paidTrafficCost: 0,
        },
      },
    },
  };
}

export function completionCheckpointFrame(offset: number): Record<string, unknown> {
  return {
    completionResponse: {
      OffsetCheckpoint: {
        value: {
          offset,
          synchronizerTimes: [{ synchronizerId: SYNC, recordTime: '2026-01-05T09:31:00.000000Z' }],
        },
      },
    },
  };
}

export function acsFrame(n: number, token?: string): Record<string, unknown> {
  return {
    workflowId: '',
    contractEntry: {
      JsActiveContract: {
        createdEvent: createdEvent(10 + n),
        synchronizerId: SYNC,
        reassignmentCounter: 0,
      },
    },
    ...(token === undefined ? {} : { streamContinuationToken: token }),
  };
}

/** A retryable error frame: the participant is shutting down (category 1). */
export const SHUTDOWN_ERROR = {
  code: 'ABORTED_DUE_TO_SHUTDOWN',
  cause: 'request aborted due to shutdown',
  correlationId: '9a0b1c2d3e4f',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  context: { participant: 'participant1', tid: '4bf92f3577b34da6a3ce929d0e0e4736' },
  resources: [],
  errorCategory: 1,
  grpcCodeValue: 14,
  retryInfo: '1 second',
  definiteAnswer: false,
};

/** A final error frame: reading below the pruning offset (category 9). */
export const PRUNED_ERROR = {
  code: 'PARTICIPANT_PRUNED_DATA_ACCESSED',
  cause: 'Updates request from 3 precedes pruned offset 120',
  correlationId: '1f2e3d4c5b6a',
  traceId: '0af7651916cd43dd8448eb211c80319c',
  context: {
    participant: 'participant1',
    earliest_offset: '120',
    tid: '0af7651916cd43dd8448eb211c80319c',
    definite_answer: 'false',
  },
  resources: [],
  errorCategory: 9,
  grpcCodeValue: 9,
  definiteAnswer: false,
};

/** The redacted error frame of an expired or invalid token on an open socket. */
export const UNAUTHENTICATED_ERROR = {
  code: 'NA',
  cause:
    'An error occurred. Please contact the operator and inquire about the request 3c4d5e6f with tid 7a8b9c0d',
  correlationId: '3c4d5e6f',
  traceId: '7a8b9c0d',
  context: {},
  resources: [],
  errorCategory: -1,
  grpcCodeValue: 16,
  definiteAnswer: false,
};

/** The handshake refusal for a token of an unknown user (HTTP 403). */
export const INVALID_TOKEN_ERROR = {
  code: 'NA',
  cause: 'invalid token',
  correlationId: 'aa11bb22',
  traceId: 'cc33dd44',
  context: { ledger_api_error: 'invalid token' },
  resources: [],
  errorCategory: -1,
  grpcCodeValue: 7,
  definiteAnswer: false,
};
