/**
 * A ledger error as data, in Canton's terms, so the server can render it as a JsCantonError body
 * or a completion status. `category` is the Canton error category, `grpcCode` its gRPC code.
 */
export type EngineError = {
  readonly code: string;
  readonly category: number;
  readonly grpcCode: number;
  readonly cause: string;
  /** `[resourceType, resourceName]` pairs, e.g. `['CONTRACT_ID', '00ab…']`. */
  readonly resources?: readonly (readonly [string, string])[];
  /** Extra error context, e.g. `{ earliest_offset: '12' }`. */
  readonly context?: Readonly<Record<string, string>>;
};

/**
 * The gRPC code of each Canton error category (NOTES.md §8.3). The one copy of this table: the
 * server derives its errors' gRPC codes (and from them the HTTP statuses) from it, too.
 */
const GRPC_CODE_BY_CATEGORY: Readonly<Record<number, number>> = {
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

export function grpcCodeOfCategory(category: number): number {
  return GRPC_CODE_BY_CATEGORY[category] ?? 2;
}

export function engineError(
  code: string,
  category: number,
  cause: string,
  extra: Pick<EngineError, 'resources' | 'context'> = {},
): EngineError {
  return { code, category, grpcCode: grpcCodeOfCategory(category), cause, ...extra };
}
