import { parseJsCantonError } from '../../src/ledger/js-canton-error.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { specValidator } from '../support/spec-validator.js';

/** JsCantonError samples and the LedgerApiError the HTTP client would throw for them. */

const spec = specValidator('openapi-3.5');

/** NOTES.md §8.3: each category's gRPC code; used to check the classify table is self-consistent. */
export const CATEGORY_GRPC: Record<number, number> = {
  1: 14,
  2: 10,
  3: 4,
  4: 13,
  5: 3,
  6: 16,
  7: 7,
  8: 3,
  9: 9,
  10: 6,
  11: 5,
  12: 11,
  14: 12,
};

const DEFAULT_RETRY: Record<number, string> = {
  1: '1 second',
  2: '1 second',
  3: '1 second',
  12: '1 second',
};

/** A JsCantonError body as the spec describes it (absent optionals omitted, not null). */
export function body(code: string, category: number, extra: Record<string, unknown> = {}) {
  const grpc = CATEGORY_GRPC[category];
  return {
    code,
    cause: `cause of ${code}`,
    correlationId: '3f0c9a1e-5c8b-4d7e-9a61-2b8d0c4e7f11',
    traceId: '99e67812af315256ef9a02a9fdb94646',
    context: { category: String(category), participant: 'participant1' },
    resources: [],
    errorCategory: category,
    ...(grpc === undefined ? {} : { grpcCodeValue: grpc }),
    ...(DEFAULT_RETRY[category] === undefined ? {} : { retryInfo: DEFAULT_RETRY[category] }),
    ...extra,
  };
}

/** What the HTTP client would throw for that body. */
export function apiError(b: unknown, status?: number): LedgerApiError {
  spec.assert('JsCantonError', b);
  const parsed = parseJsCantonError(b);
  if (parsed === undefined) throw new Error('sample is not a JsCantonError');
  return new LedgerApiError(parsed, 'POST /v2/commands/async/submit', status);
}
