/**
 * The Canton error codes the sandbox can raise, with their ErrorCategory (NOTES.md §8.3, §8.4).
 * Fault injection accepts any code of this table; the category decides the gRPC code (the table
 * in engine-error.ts), the HTTP status, the retry hint and whether the error is redacted on the wire.
 */
export const CANTON_ERROR_CATEGORIES = {
  DUPLICATE_COMMAND: 10,
  SUBMISSION_ALREADY_IN_FLIGHT: 2,
  INVALID_DEDUPLICATION_PERIOD: 9,
  CONTRACT_NOT_FOUND: 11,
  CONTRACT_NOT_ACTIVE: 11,
  LOCAL_VERDICT_INACTIVE_CONTRACTS: 11,
  LOCAL_VERDICT_LOCKED_CONTRACTS: 2,
  INCONSISTENT: 9,
  INCONSISTENT_CONTRACT_KEY: 9,
  DUPLICATE_CONTRACT_KEY: 10,
  NOT_CONNECTED_TO_ANY_SYNCHRONIZER: 9,
  NOT_CONNECTED_TO_SYNCHRONIZER: 9,
  NO_SYNCHRONIZER_FOR_SUBMISSION: 9,
  NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT: 11,
  SUBMISSION_SYNCHRONIZER_NOT_READY: 11,
  SYNCHRONIZER_IS_NOT_AVAILABLE: 1,
  PARTICIPANT_BACKPRESSURE: 2,
  SEQUENCER_BACKPRESSURE: 2,
  SEQUENCER_REQUEST_FAILED: 2,
  NOT_SEQUENCED_TIMEOUT: 2,
  MEDIATOR_SAYS_TX_TIMED_OUT: 2,
  CHOSEN_MEDIATOR_IS_INACTIVE: 2,
  SUBMISSION_DURING_SHUTDOWN: 2,
  THREADPOOL_OVERLOADED: 2,
  MAXIMUM_NUMBER_OF_STREAMS: 2,
  HEAP_MEMORY_OVER_LIMIT: 2,
  ABORTED_DUE_TO_SHUTDOWN: 1,
  SERVICE_NOT_RUNNING: 1,
  NODE_IS_PASSIVE_REPLICA: 1,
  REQUEST_TIME_OUT: 3,
  REQUEST_DEADLINE_EXCEEDED: 3,
  LEDGER_API_INTERNAL_ERROR: 4,
  OFFSET_AFTER_LEDGER_END: 12,
  OFFSET_OUT_OF_RANGE: 9,
  PARTICIPANT_PRUNED_DATA_ACCESSED: 9,
  INVALID_ARGUMENT: 8,
  INVALID_FIELD: 8,
  MISSING_FIELD: 8,
  DAML_INTERPRETATION_ERROR: 9,
  UNHANDLED_EXCEPTION: 9,
  INTERPRETATION_USER_ERROR: 9,
  DAML_AUTHORIZATION_ERROR: 8,
  COMMAND_PREPROCESSING_FAILED: 8,
  INTERPRETATION_TIME_EXCEEDED: 2,
  TEMPLATES_OR_INTERFACES_NOT_FOUND: 11,
  PACKAGE_NAMES_NOT_FOUND: 11,
  PACKAGE_NOT_FOUND: 11,
  PARTY_NOT_FOUND: 11,
  USER_NOT_FOUND: 11,
  USER_ALREADY_EXISTS: 10,
  UPDATE_NOT_FOUND: 11,
  CONTRACT_EVENTS_NOT_FOUND: 11,
  PERMISSION_DENIED: 7,
  UNAUTHENTICATED: 6,
  JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED: 2,
  UNSUPPORTED_OPERATION: 14,
} as const satisfies Record<string, number>;

export type CantonErrorCode = keyof typeof CANTON_ERROR_CATEGORIES;

export function isCantonErrorCode(code: string): code is CantonErrorCode {
  return Object.hasOwn(CANTON_ERROR_CATEGORIES, code);
}

/** HTTP status of each gRPC code, as the JSON API maps them (NOTES.md §8.2). */
const GRPC_HTTP: Readonly<Record<number, number>> = {
  0: 200,
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

/** Categories whose gRPC message Canton redacts (NOTES.md §8.1). */
const REDACTED_CATEGORIES: ReadonlySet<number> = new Set([4, 6, 7, 14]);

/** Categories with a default retry delay; Scala renders it as "1 second" (NOTES.md §8.1). */
const RETRYABLE_CATEGORIES: ReadonlySet<number> = new Set([1, 2, 3, 12]);

export function categoryOf(code: CantonErrorCode): number {
  return CANTON_ERROR_CATEGORIES[code];
}

export function httpStatusOfGrpc(grpcCode: number): number {
  return GRPC_HTTP[grpcCode] ?? 500;
}

export function isRedactedCategory(category: number): boolean {
  return REDACTED_CATEGORIES.has(category);
}

export function retryInfoOfCategory(category: number): string | undefined {
  return RETRYABLE_CATEGORIES.has(category) ? '1 second' : undefined;
}
