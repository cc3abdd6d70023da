import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AbortError } from '../../src/core/abort-error.js';
import { AuthError } from '../../src/ledger/auth/auth-error.js';
import { classify, retryDelayHintMs, type Classification } from '../../src/ledger/classify.js';
import { completionError } from '../../src/ledger/completion-status.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { SHARED_LEDGER_API_DIR, skipWithoutShared } from '../support/shared-files.js';
import { specValidator } from '../support/spec-validator.js';
import { apiError, body, CATEGORY_GRPC } from './canton-error-samples.js';
import { cantonStatus, completion, retryInfo, specForm } from './status-samples.js';

const spec = specValidator('openapi-3.5');

/** NOTES.md §8.2 */
const GRPC_HTTP: Record<number, number> = {
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  9: 400,
  10: 409,
  11: 400,
  13: 500,
  14: 503,
  16: 401,
};

type Row = [code: string, category: number, expected: Classification, definiteAnswer?: boolean];

/** One row per code named in NOTES.md §8.4, in its order. */
const TABLE: Row[] = [
  ['DUPLICATE_COMMAND', 10, 'duplicate', true],
  ['SUBMISSION_ALREADY_IN_FLIGHT', 2, 'in-flight'],
  ['INVALID_DEDUPLICATION_PERIOD', 9, 'final', true],
  ['CONTRACT_NOT_FOUND', 11, 'stale'],
  ['CONTRACT_NOT_ACTIVE', 11, 'stale'],
  ['LOCAL_VERDICT_INACTIVE_CONTRACTS', 11, 'stale', true],
  ['LOCAL_VERDICT_LOCKED_CONTRACTS', 2, 'stale', true],
  ['INCONSISTENT', 9, 'stale'],
  ['INCONSISTENT_CONTRACT_KEY', 9, 'stale'],
  ['DUPLICATE_CONTRACT_KEY', 10, 'stale'],
  ['NOT_CONNECTED_TO_ANY_SYNCHRONIZER', 9, 'final'],
  ['NOT_CONNECTED_TO_SYNCHRONIZER', 9, 'final'],
  ['NO_SYNCHRONIZER_FOR_SUBMISSION', 9, 'final'],
  ['NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT', 11, 'final'],
  ['SUBMISSION_SYNCHRONIZER_NOT_READY', 11, 'final'],
  ['SYNCHRONIZER_IS_NOT_AVAILABLE', 1, 'retryable'],
  ['PARTICIPANT_BACKPRESSURE', 2, 'retryable'],
  ['SEQUENCER_BACKPRESSURE', 2, 'retryable'],
  ['SEQUENCER_REQUEST_FAILED', 2, 'retryable'],
  ['NOT_SEQUENCED_TIMEOUT', 2, 'retryable'],
  ['MEDIATOR_SAYS_TX_TIMED_OUT', 2, 'retryable'],
  ['CHOSEN_MEDIATOR_IS_INACTIVE', 2, 'retryable'],
  ['SUBMISSION_DURING_SHUTDOWN', 2, 'retryable'],
  ['THREADPOOL_OVERLOADED', 2, 'retryable'],
  ['MAXIMUM_NUMBER_OF_STREAMS', 2, 'retryable'],
  ['HEAP_MEMORY_OVER_LIMIT', 2, 'retryable'],
  ['ABORTED_DUE_TO_SHUTDOWN', 1, 'retryable'],
  ['SERVICE_NOT_RUNNING', 1, 'retryable'],
  ['NODE_IS_PASSIVE_REPLICA', 1, 'retryable'],
  ['REQUEST_TIME_OUT', 3, 'unknown-outcome', false],
  ['REQUEST_DEADLINE_EXCEEDED', 3, 'unknown-outcome'],
  ['LEDGER_API_INTERNAL_ERROR', 4, 'unknown-outcome', false],
  ['OFFSET_AFTER_LEDGER_END', 12, 'retryable'],
  ['PARTICIPANT_PRUNED_DATA_ACCESSED', 9, 'final'],
  ['INVALID_ARGUMENT', 8, 'final'],
  ['INVALID_FIELD', 8, 'final'],
  ['MISSING_FIELD', 8, 'final'],
  ['DAML_INTERPRETATION_ERROR', 9, 'final'],
  ['UNHANDLED_EXCEPTION', 9, 'final'],
  ['INTERPRETATION_USER_ERROR', 9, 'final'],
  ['DAML_AUTHORIZATION_ERROR', 8, 'final'],
  ['COMMAND_PREPROCESSING_FAILED', 8, 'final'],
  ['INTERPRETATION_TIME_EXCEEDED', 2, 'retryable'],
  ['TEMPLATES_OR_INTERFACES_NOT_FOUND', 11, 'final'],
  ['PACKAGE_NAMES_NOT_FOUND', 11, 'final'],
  ['PACKAGE_NOT_FOUND', 11, 'final'],
  ['PARTY_NOT_FOUND', 11, 'final'],
  ['USER_NOT_FOUND', 11, 'final'],
  ['USER_ALREADY_EXISTS', 10, 'final'],
  ['PERMISSION_DENIED', 7, 'final'],
  ['UNAUTHENTICATED', 6, 'final'],
  ['JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED', 2, 'final'],
];

describe('classify: every code of NOTES.md §8.4', () => {
  // NOTES.md is not committed: a clone without ../shared skips this (CI always has it).
  it.skipIf(skipWithoutShared('ledger-api/NOTES.md'))(
    'has one row for every code NOTES.md §8.4 names, and no other (reads ../shared/ledger-api/NOTES.md; skipped without it)',
    () => {
      const notes = readFileSync(`${SHARED_LEDGER_API_DIR}NOTES.md`, 'utf8');
      const section = notes.slice(notes.indexOf('### 8.4'), notes.indexOf('### 8.5'));
      // Tokens in that section that are gRPC status names, resource types, or a retired name.
      const notCodes = new Set([
        'ALREADY_EXISTS',
        'CONTRACT_ID',
        'DEADLINE_EXCEEDED',
        'FAILED_PRECONDITION',
        'NOT_CONNECTED_TO_ANY_DOMAIN',
        'NOT_FOUND',
        'OUT_OF_RANGE',
        'TEMPLATE_ID',
      ]);
      const named = new Set(
        [...section.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)]
          .map((m) => m[0])
          .filter((c) => !notCodes.has(c)),
      );
      // Single-word codes the pattern above cannot tell from prose.
      named.add('INCONSISTENT');
      named.add('UNAUTHENTICATED');
      const rows = TABLE.map((r) => r[0]);
      expect(new Set(rows).size).toBe(rows.length);
      expect([...rows].sort()).toEqual([...named].sort());
    },
  );

  it.each(TABLE)('%s (category %i) → %s', (code, category, expected, definite) => {
    const grpc = CATEGORY_GRPC[category];
    expect(grpc).toBeDefined();
    const status =
      code === 'JSON_API_MAXIMUM_LIST_ELEMENTS_NUMBER_REACHED' ? 413 : GRPC_HTTP[grpc!];
    const context: Record<string, string> = { category: String(category) };
    if (definite !== undefined) context.definite_answer = String(definite);
    const err = apiError(body(code, category, { context }), status);
    expect(classify(err)).toBe(expected);
  });

  it.each(TABLE)('%s as a completion status → same class', (code, category, expected, definite) => {
    const status = cantonStatus({
      code,
      category,
      grpc: CATEGORY_GRPC[category]!,
      cause: 'x',
      ...(definite === undefined ? {} : { definiteAnswer: definite }),
    });
    const c = completion(specForm(status));
    spec.assert('Completion1', c);
    expect(classify(completionError(c, 'POST /v2/commands/async/submit'))).toBe(expected);
  });
});

describe('classify: categories and flags', () => {
  it('does not look at the HTTP status: a 409 is duplicate or in-flight by code', () => {
    expect(classify(apiError(body('DUPLICATE_COMMAND', 10), 409))).toBe('duplicate');
    expect(classify(apiError(body('SUBMISSION_ALREADY_IN_FLIGHT', 2), 409))).toBe('in-flight');
    expect(classify(apiError(body('PARTICIPANT_BACKPRESSURE', 2), 409))).toBe('retryable');
  });

  it('category 4 is final only with definite_answer "true"', () => {
    const ctx = (v: string) => ({ context: { category: '4', definite_answer: v } });
    expect(classify(apiError(body('LEDGER_API_INTERNAL_ERROR', 4, ctx('true'))))).toBe('final');
    expect(classify(apiError(body('LEDGER_API_INTERNAL_ERROR', 4, ctx('false'))))).toBe(
      'unknown-outcome',
    );
    expect(classify(apiError(body('LEDGER_API_INTERNAL_ERROR', 4, { definiteAnswer: true })))).toBe(
      'final',
    );
  });

  it('unknown codes fall back to their category', () => {
    expect(classify(apiError(body('SOME_FUTURE_CODE', 1)))).toBe('retryable');
    expect(classify(apiError(body('SOME_FUTURE_CODE', 3)))).toBe('unknown-outcome');
    expect(classify(apiError(body('SOME_FUTURE_CODE', 5)))).toBe('final');
    expect(classify(apiError(body('SOME_FUTURE_CODE', 10)))).toBe('final');
    expect(classify(apiError(body('SOME_FUTURE_CODE', 12)))).toBe('retryable');
    expect(classify(apiError(body('SOME_FUTURE_CODE', 14)))).toBe('final');
  });

  it('classifies a raw JsCantonError body with wire nulls too', () => {
    const wire = { ...body('REQUEST_TIME_OUT', 3), correlationId: null, definiteAnswer: null };
    expect(classify(wire)).toBe('unknown-outcome');
  });
});

describe('classify: redacted and non-Canton errors (category -1)', () => {
  const redacted = (grpc: number, extra: Record<string, unknown> = {}) =>
    apiError({
      code: 'NA',
      cause: 'A security-sensitive error has been received',
      context: {},
      resources: [],
      errorCategory: -1,
      grpcCodeValue: grpc,
      ...extra,
    });
  it.each<[number, Classification]>([
    [16, 'final'],
    [7, 'final'],
    [3, 'final'],
    [12, 'final'],
    [5, 'final'],
    [9, 'final'],
    [14, 'retryable'],
    [10, 'retryable'],
    [8, 'retryable'],
    [11, 'retryable'],
    [4, 'unknown-outcome'],
    [13, 'unknown-outcome'],
    [2, 'unknown-outcome'],
    [1, 'unknown-outcome'],
  ])('gRPC %i → %s', (grpc, expected) => {
    expect(classify(redacted(grpc))).toBe(expected);
  });

  it('INTERNAL with definiteAnswer true is final', () => {
    expect(classify(redacted(13, { definiteAnswer: true }))).toBe('final');
  });

  it('a non-Canton error without a gRPC code is final', () => {
    expect(classify(apiError({ code: 'weird', cause: '?', context: {}, errorCategory: -1 }))).toBe(
      'final',
    );
  });
});

describe('classify: transport, auth, abort and anything else', () => {
  const transport = (
    failure: 'connect' | 'reset' | 'timeout' | 'bad-response' | 'closed',
    status?: number,
  ) =>
    new LedgerTransportError(
      failure,
      'POST /v2/commands/async/submit',
      'x',
      status === undefined ? {} : { status },
    );
  it.each<[LedgerTransportError, Classification]>([
    [transport('connect'), 'retryable'],
    [transport('reset'), 'unknown-outcome'],
    [transport('timeout'), 'unknown-outcome'],
    [transport('closed'), 'unknown-outcome'],
    [transport('bad-response', 502), 'unknown-outcome'],
    [transport('bad-response', 503), 'unknown-outcome'],
    [transport('bad-response', 504), 'unknown-outcome'],
    [transport('bad-response', 408), 'unknown-outcome'],
    [transport('bad-response', 429), 'retryable'],
    [transport('bad-response', 404), 'final'],
    [transport('bad-response', 500), 'final'],
    [transport('bad-response'), 'final'],
  ])('%s → %s', (err, expected) => {
    expect(classify(err)).toBe(expected);
  });

  it('auth errors follow their retryable flag', () => {
    expect(classify(new AuthError('AUTH_OAUTH2_UNREACHABLE', 'x', { retryable: true }))).toBe(
      'retryable',
    );
    expect(classify(new AuthError('AUTH_OAUTH2_REJECTED', 'x'))).toBe('final');
  });

  it('aborts and unknown throwables are final', () => {
    expect(classify(new AbortError())).toBe('final');
    expect(classify(new Error('boom'))).toBe('final');
    expect(classify('boom')).toBe('final');
    expect(classify(undefined)).toBe('final');
    expect(classify(null)).toBe('final');
  });
});

describe('retryDelayHintMs', () => {
  it.each<[string, number]>([
    ['1 second', 1000],
    ['10 seconds', 10_000],
    ['500 milliseconds', 500],
    ['2 minutes', 120_000],
    ['1 hour', 3_600_000],
    ['1500 microseconds', 2],
  ])('retryInfo "%s" → %i ms', (text, ms) => {
    expect(
      retryDelayHintMs(apiError(body('PARTICIPANT_BACKPRESSURE', 2, { retryInfo: text }))),
    ).toBe(ms);
  });

  it('known overrides beat the category default in retryInfo', () => {
    expect(retryDelayHintMs(apiError(body('ABORTED_DUE_TO_SHUTDOWN', 1)))).toBe(10_000);
    expect(retryDelayHintMs(apiError(body('INTERPRETATION_TIME_EXCEEDED', 2)))).toBe(60_000);
  });

  it('undefined without a hint', () => {
    expect(retryDelayHintMs(apiError(body('INVALID_ARGUMENT', 8)))).toBeUndefined();
    expect(retryDelayHintMs(apiError(body('X', 2, { retryInfo: 'soon' })))).toBeUndefined();
    expect(
      retryDelayHintMs(new LedgerTransportError('connect', 'GET /livez', 'x')),
    ).toBeUndefined();
    expect(retryDelayHintMs(new Error('x'))).toBeUndefined();
  });

  it('reads the RetryInfo detail of a completion', () => {
    const status = cantonStatus({
      code: 'SEQUENCER_BACKPRESSURE',
      category: 2,
      grpc: 10,
      cause: 'busy',
      extraDetails: [retryInfo(5)],
    });
    const c = completion(specForm(status));
    spec.assert('Completion1', c);
    expect(retryDelayHintMs(completionError(c, 'POST /v2/commands/async/submit'))).toBe(5000);
  });
});
