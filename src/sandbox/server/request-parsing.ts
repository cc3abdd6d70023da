import type {
  EventFormat,
  Filters,
  TransactionFilter,
  TransactionFormat,
} from '../../ledger/wire/wire-types.js';
import type { RequestedDedup } from './dedup-tracker.js';
import { SandboxApiError } from './sandbox-api-error.js';

/**
 * A body the JSON layer cannot decode. Canton (tapir) answers these with a 400 `text/plain`
 * body, not a JsCantonError (NOTES.md §8.1).
 */
export class BodyDecodeError extends Error {
  constructor(detail: string) {
    super(`Invalid value for: body (${detail})`);
  }
}

export type JsonObject = Record<string, unknown>;

export function asObject(body: unknown): JsonObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BodyDecodeError('expected a JSON object');
  }
  return body as JsonObject;
}

export function invalidArgument(cause: string): SandboxApiError {
  return new SandboxApiError(
    'INVALID_ARGUMENT',
    `The submitted request has invalid arguments: ${cause}`,
  );
}

export function missingField(field: string): SandboxApiError {
  return new SandboxApiError(
    'MISSING_FIELD',
    `The submitted command is missing a mandatory field: ${field}`,
    { context: { field_name: field } },
  );
}

export function invalidField(field: string, message: string): SandboxApiError {
  return new SandboxApiError(
    'INVALID_FIELD',
    `The submitted command has a field with invalid value: Invalid field ${field}: ${message}`,
    { context: { field_name: field } },
  );
}

/** An optional int64 field; numbers only (Canton encodes int64 as JSON numbers). */
export function optionalOffset(o: JsonObject, key: string, field: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new BodyDecodeError(`expected an integer at '${key}'`);
  }
  if (v < 0) throw invalidField(field, 'the offset must be non-negative');
  return v;
}

export function stringList(o: JsonObject, key: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw new BodyDecodeError(`expected a list of strings at '${key}'`);
  }
  return v as string[];
}

export function optionalString(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new BodyDecodeError(`expected a string at '${key}'`);
  return v;
}

/** The parties an event format reads as, and whether it reads as any party. */
export function formatParties(format: EventFormat): { parties: string[]; anyParty: boolean } {
  return {
    parties: Object.keys(format.filtersByParty ?? {}),
    anyParty: format.filtersForAnyParty !== undefined,
  };
}

function checkFilters(f: unknown, where: string): void {
  if (f === null || typeof f !== 'object' || Array.isArray(f)) {
    throw new BodyDecodeError(`expected filters at '${where}'`);
  }
  const cumulative = (f as Filters).cumulative;
  if (cumulative !== undefined && !Array.isArray(cumulative)) {
    throw new BodyDecodeError(`expected a list at '${where}.cumulative'`);
  }
}

export function parseEventFormat(v: unknown, where: string): EventFormat {
  const o = asObjectAt(v, where);
  const byParty = o.filtersByParty;
  if (byParty !== undefined && byParty !== null) {
    const m = asObjectAt(byParty, `${where}.filtersByParty`);
    for (const [party, f] of Object.entries(m)) checkFilters(f, `${where}.filtersByParty.${party}`);
  }
  if (o.filtersForAnyParty !== undefined && o.filtersForAnyParty !== null) {
    checkFilters(o.filtersForAnyParty, `${where}.filtersForAnyParty`);
  }
  const out: EventFormat = {};
  if (byParty !== undefined && byParty !== null) {
    out.filtersByParty = byParty as NonNullable<EventFormat['filtersByParty']>;
  }
  if (o.filtersForAnyParty !== undefined && o.filtersForAnyParty !== null) {
    out.filtersForAnyParty = o.filtersForAnyParty;
  }
  if (o.verbose === true) out.verbose = true;
  if (Object.keys(out.filtersByParty ?? {}).length === 0 && out.filtersForAnyParty === undefined) {
    throw invalidArgument('filtersByParty and filtersForAnyParty cannot be empty simultaneously');
  }
  return out;
}

function asObjectAt(v: unknown, where: string): JsonObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new BodyDecodeError(`expected an object at '${where}'`);
  }
  return v as JsonObject;
}

const SHAPES = new Set(['TRANSACTION_SHAPE_ACS_DELTA', 'TRANSACTION_SHAPE_LEDGER_EFFECTS']);

export function parseTransactionFormat(v: unknown, where: string): TransactionFormat {
  const o = asObjectAt(v, where);
  if (o.eventFormat === undefined || o.eventFormat === null) {
    throw missingField('event_format');
  }
  const shape = o.transactionShape;
  if (typeof shape !== 'string' || !SHAPES.has(shape)) {
    throw invalidField(
      'transaction_shape',
      'expected TRANSACTION_SHAPE_ACS_DELTA or TRANSACTION_SHAPE_LEDGER_EFFECTS',
    );
  }
  return {
    eventFormat: parseEventFormat(o.eventFormat, `${where}.eventFormat`),
    transactionShape: shape as TransactionFormat['transactionShape'],
  };
}

/** What an update read asks for, from `updateFormat` or the legacy `filter` (NOTES.md §2.1). */
export type UpdateSelection = {
  /** undefined: no transactions requested. */
  readonly transactions: TransactionFormat | undefined;
};

export function parseUpdateFormat(v: unknown, where: string): UpdateSelection {
  const o = asObjectAt(v, where);
  const inc = o.includeTransactions;
  return {
    transactions:
      inc === undefined || inc === null
        ? undefined
        : parseTransactionFormat(inc, `${where}.includeTransactions`),
  };
}

/** The 3.4 and 3.5 shapes of GetUpdatesRequest: updateFormat XOR legacy filter/verbose. */
export function parseUpdateSelection(o: JsonObject): UpdateSelection {
  return formatOrLegacyFilter(
    o,
    { key: 'updateFormat', field: 'update_format' },
    (format) => parseUpdateFormat(format, 'updateFormat'),
    (filter, verbose) => ({
      transactions: {
        eventFormat: legacyEventFormat(filter, verbose),
        transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA',
      },
    }),
  );
}

/**
 * A request's format (`key`, `field` in Canton's messages) XOR the legacy filter/verbose pair,
 * refused as Canton refuses it when both or neither are given.
 */
function formatOrLegacyFilter<T>(
  o: JsonObject,
  format: { readonly key: string; readonly field: string },
  parseFormat: (value: unknown) => T,
  parseLegacy: (filter: unknown, verbose: boolean) => T,
): T {
  const { key, field } = format;
  const hasFormat = o[key] !== undefined && o[key] !== null;
  const hasFilter = o.filter !== undefined && o.filter !== null;
  if (hasFormat && hasFilter) {
    throw invalidArgument(
      `Both ${field} and filter are set. Please use either backwards compatible arguments (filter and verbose) or ${field}, but not both.`,
    );
  }
  if (hasFormat && o.verbose === true) {
    throw invalidArgument(
      `Both ${field} and verbose are set. Please use either backwards compatible arguments (filter and verbose) or ${field}, but not both.`,
    );
  }
  if (hasFormat) return parseFormat(o[key]);
  if (hasFilter) return parseLegacy(o.filter, o.verbose === true);
  throw invalidArgument(
    `Either filter/verbose or ${field} is required. Please use either backwards compatible arguments (filter and verbose) or ${field}.`,
  );
}

export function legacyEventFormat(filter: unknown, verbose: boolean): EventFormat {
  const f = parseEventFormat(filter, 'filter') as TransactionFilter & EventFormat;
  return verbose ? { ...f, verbose: true } : f;
}

/** GetActiveContractsRequest: eventFormat XOR legacy filter/verbose. */
export function parseAcsEventFormat(o: JsonObject): EventFormat {
  return formatOrLegacyFilter(
    o,
    { key: 'eventFormat', field: 'event_format' },
    (format) => parseEventFormat(format, 'eventFormat'),
    legacyEventFormat,
  );
}

/** JsCommands.deduplicationPeriod (NOTES.md §4.4). */
export function parseDedupPeriod(v: unknown): RequestedDedup {
  if (v === undefined || v === null) return { kind: 'max' };
  const o = asObjectAt(v, 'deduplicationPeriod');
  if ('Empty' in o) return { kind: 'max' };
  if ('DeduplicationOffset' in o) {
    const inner = asObjectAt(o.DeduplicationOffset, 'deduplicationPeriod.DeduplicationOffset');
    const off = inner.value;
    if (typeof off !== 'number' || !Number.isInteger(off)) {
      throw new BodyDecodeError(
        `expected an integer at 'deduplicationPeriod.DeduplicationOffset.value'`,
      );
    }
    if (off < 0) throw invalidField('deduplication_period', 'the offset must be non-negative');
    return { kind: 'offset', offset: off };
  }
  if ('DeduplicationDuration' in o) {
    const inner = asObjectAt(o.DeduplicationDuration, 'deduplicationPeriod.DeduplicationDuration');
    const d = asObjectAt(inner.value, 'deduplicationPeriod.DeduplicationDuration.value');
    const seconds = d.seconds ?? 0;
    const nanos = d.nanos ?? 0;
    if (typeof seconds !== 'number' || typeof nanos !== 'number') {
      throw new BodyDecodeError(
        `expected numbers in 'deduplicationPeriod.DeduplicationDuration.value'`,
      );
    }
    const ms = seconds * 1000 + Math.floor(nanos / 1e6);
    if (ms < 0) {
      throw invalidField('deduplication_period', 'Duration must be non-negative');
    }
    return { kind: 'duration', ms };
  }
  throw new BodyDecodeError('unknown deduplicationPeriod case');
}
