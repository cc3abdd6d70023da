import { describe, expect, it } from 'vitest';
import { classify } from '../../src/ledger/classify.js';
import { completionError, parseCompletionStatus } from '../../src/ledger/completion-status.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { specValidator } from '../support/spec-validator.js';
import {
  cantonStatus,
  completion,
  errorInfo,
  requestInfo,
  resourceInfo,
  retryInfo,
  specForm,
} from './status-samples.js';

const spec = specValidator('openapi-3.5');
const CORR = '3f0c9a1e-5c8b-4d7e-9a61-2b8d0c4e7f11';

const inactive = cantonStatus({
  code: 'LOCAL_VERDICT_INACTIVE_CONTRACTS',
  category: 11,
  grpc: 5,
  cause: 'Rejected transaction is referring to inactive contracts',
  definiteAnswer: true,
  correlationId: CORR,
  extraDetails: [resourceInfo('CONTRACT_ID', '00af12'), resourceInfo('CONTRACT_ID', '00bc34')],
});

describe('the spec and Canton disagree on ProtoAny.valueDecoded', () => {
  it('the spec types it as a string, so Canton-shaped details fail strict validation', () => {
    const errs = spec.errors('Completion1', completion(inactive));
    expect(errs.some((e) => e.includes('valueDecoded') && e.includes('string'))).toBe(true);
  });

  it('without valueDecoded the sample is spec-valid', () => {
    spec.assert('Completion1', completion(specForm(inactive)));
  });

  it('parses the same from valueDecoded objects and from the protobuf bytes alone', () => {
    const fromDecoded = parseCompletionStatus(inactive);
    const fromBytes = parseCompletionStatus(specForm(inactive));
    expect(fromBytes).toEqual(fromDecoded);
    expect(fromBytes).toEqual({
      code: 'LOCAL_VERDICT_INACTIVE_CONTRACTS',
      cause: 'Rejected transaction is referring to inactive contracts',
      correlationId: CORR,
      traceId: '99e67812af315256ef9a02a9fdb94646',
      context: {
        category: '11',
        definite_answer: 'true',
        participant: 'participant1',
        tid: '99e67812af315256ef9a02a9fdb94646',
      },
      resources: [
        ['CONTRACT_ID', '00af12'],
        ['CONTRACT_ID', '00bc34'],
      ],
      errorCategory: 11,
      grpcCodeValue: 5,
      retryInfo: null,
      definiteAnswer: true,
    });
  });

  it('valueDecoded as the string Canton uses for unknown types falls back to the bytes', () => {
    const status = {
      ...inactive,
      details: inactive.details.map((d) => ({ ...d, valueDecoded: 'Unknown type for decoding' })),
    };
    spec.assert('Completion1', completion(status));
    expect(parseCompletionStatus(status)?.code).toBe('LOCAL_VERDICT_INACTIVE_CONTRACTS');
  });
});

describe('parseCompletionStatus', () => {
  it('is undefined for success and for a missing status', () => {
    const ok = { code: 0, message: '', details: [] };
    spec.assert('Completion1', completion(ok, { updateId: '1220ab' }));
    expect(parseCompletionStatus(ok)).toBeUndefined();
    expect(parseCompletionStatus(undefined)).toBeUndefined();
    expect(parseCompletionStatus(null)).toBeUndefined();
    expect(completionError(completion(ok), 'POST /v2/commands/async/submit')).toBeUndefined();
    expect(
      completionError(completion(undefined), 'POST /v2/commands/async/submit'),
    ).toBeUndefined();
  });

  it('DUPLICATE_COMMAND keeps completion_offset in the context', () => {
    const status = cantonStatus({
      code: 'DUPLICATE_COMMAND',
      category: 10,
      grpc: 6,
      cause: 'A command with the given command id has already been successfully processed',
      definiteAnswer: true,
      extraContext: { completion_offset: '17', changeId: 'x' },
    });
    const c = completion(specForm(status));
    spec.assert('Completion1', c);
    const err = completionError(c, 'POST /v2/commands/async/submit');
    expect(err).toBeInstanceOf(LedgerApiError);
    expect(err?.status).toBeUndefined();
    expect(err?.definiteAnswer).toBe(true);
    expect(err?.error.context.completion_offset).toBe('17');
    expect(err?.code).toBe('DUPLICATE_COMMAND');
    expect(classify(err)).toBe('duplicate');
  });

  it('renders RetryInfo as Scala does, e.g. the 10 s shutdown override', () => {
    const status = cantonStatus({
      code: 'ABORTED_DUE_TO_SHUTDOWN',
      category: 1,
      grpc: 14,
      cause: 'request aborted due to shutdown',
      extraDetails: [retryInfo(10)],
    });
    expect(parseCompletionStatus(specForm(status))?.retryInfo).toBe('10 seconds');
    const half = { ...status, details: [...status.details.slice(0, 1), retryInfo(0, 500_000_000)] };
    expect(parseCompletionStatus(specForm(half))?.retryInfo).toBe('500 milliseconds');
    const one = { ...status, details: [retryInfo(1)] };
    expect(parseCompletionStatus(specForm(one))?.retryInfo).toBe('1 second');
  });

  it('falls back to the message when there is no ErrorInfo', () => {
    const status = {
      code: 10,
      message: 'SEQUENCER_BACKPRESSURE(2,3f0c9a1e): The sequencer is overloaded: try again',
      details: [],
    };
    spec.assert('Completion1', completion(status));
    expect(parseCompletionStatus(status)).toEqual({
      code: 'SEQUENCER_BACKPRESSURE',
      cause: 'The sequencer is overloaded: try again',
      correlationId: '3f0c9a1e',
      traceId: null,
      context: {},
      resources: [],
      errorCategory: 2,
      grpcCodeValue: 10,
      retryInfo: null,
      definiteAnswer: null,
    });
    expect(classify(completionError(completion(status), 'x'))).toBe('retryable');
  });

  it('a correlation id of 0 in the message means none', () => {
    const status = { code: 9, message: 'INCONSISTENT(9,0): keys changed', details: [] };
    const e = parseCompletionStatus(status);
    expect(e?.correlationId).toBeNull();
    expect(e?.errorCategory).toBe(9);
  });

  it('uses ErrorInfo over the message, and RequestInfo for the full correlation id', () => {
    const status = {
      code: 10,
      message: 'SOMETHING_ELSE(1,abcdef01): differs',
      details: [errorInfo('NOT_SEQUENCED_TIMEOUT', { category: '2' }), requestInfo(CORR)],
    };
    const e = parseCompletionStatus(specForm(status));
    expect(e?.code).toBe('NOT_SEQUENCED_TIMEOUT');
    expect(e?.errorCategory).toBe(2);
    expect(e?.correlationId).toBe(CORR);
    expect(e?.cause).toBe('differs');
  });

  it('a redacted message becomes code NA, category -1, and classifies by gRPC code', () => {
    const status = {
      code: 13,
      message: `An error occurred. Please contact the operator and inquire about the request ${CORR} with tid 99e6`,
      details: [requestInfo(CORR)],
    };
    spec.assert('Completion1', completion(specForm(status)));
    const e = parseCompletionStatus(specForm(status));
    expect(e).toMatchObject({
      code: 'NA',
      errorCategory: -1,
      grpcCodeValue: 13,
      correlationId: CORR,
      cause: 'A security-sensitive error has been received',
    });
    expect(classify(completionError({ status: specForm(status) }, 'x'))).toBe('unknown-outcome');
  });

  it('a plain gRPC error without Canton details is named by its gRPC code', () => {
    const e = parseCompletionStatus({ code: 14, message: 'io exception', details: [] });
    expect(e).toMatchObject({ code: 'UNAVAILABLE', errorCategory: -1, cause: 'io exception' });
    expect(classify(completionError({ status: { code: 14, message: '', details: [] } }, 'x'))).toBe(
      'retryable',
    );
  });

  it('ignores details it cannot read', () => {
    const status = {
      code: 5,
      message: 'CONTRACT_NOT_FOUND(11,0): gone',
      details: [
        {
          typeUrl: 'type.googleapis.com/google.rpc.ErrorInfo',
          value: '!!not base64 proto',
          unknownFields: { fields: {} },
        },
        {
          typeUrl: 'type.googleapis.com/google.rpc.DebugInfo',
          value: '',
          unknownFields: { fields: {} },
        },
        'junk',
      ],
    };
    const e = parseCompletionStatus(status);
    expect(e?.code).toBe('CONTRACT_NOT_FOUND');
    expect(classify(completionError({ status }, 'x'))).toBe('stale');
  });
});
