import { describe, expect, it } from 'vitest';
import {
  hasLedgerErrorCode,
  isAuthRejection,
  isDedupPeriodRefused,
  isKeyConflict,
  isPrunedDataAccess,
  isResourceMissing,
  isTokenRejected,
  earliestOffsetOf,
  ledgerErrorCode,
} from '../../src/ledger/error-checks.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { apiError, body } from './canton-error-samples.js';

const transport = new LedgerTransportError('bad-response', 'GET /v2/state/ledger-end', 'html', {
  status: 404,
});

describe('isTokenRejected and isAuthRejection', () => {
  it('tell a rejected token (401, UNAUTHENTICATED) from missing rights (403, PERMISSION_DENIED)', () => {
    const unauthenticated = apiError(body('UNAUTHENTICATED', 6), 401);
    const denied = apiError(body('PERMISSION_DENIED', 7), 403);
    // The same codes in a websocket error frame, which has no HTTP status.
    const frameUnauthenticated = apiError(body('UNAUTHENTICATED', 6));
    const frameDenied = apiError(body('PERMISSION_DENIED', 7));
    const contention = apiError(body('CONTRACT_NOT_FOUND', 11), 404);
    for (const err of [unauthenticated, frameUnauthenticated]) {
      expect(isTokenRejected(err)).toBe(true);
      expect(isAuthRejection(err)).toBe(true);
    }
    for (const err of [denied, frameDenied]) {
      expect(isTokenRejected(err)).toBe(false);
      expect(isAuthRejection(err)).toBe(true);
    }
    for (const err of [contention, new Error('401'), undefined]) {
      expect(isTokenRejected(err)).toBe(false);
      expect(isAuthRejection(err)).toBe(false);
    }
  });
});

describe('ledgerErrorCode and hasLedgerErrorCode', () => {
  it("read the participant's code, and nothing from other errors", () => {
    const err = apiError(body('UPDATE_NOT_FOUND', 11), 404);
    expect(ledgerErrorCode(err)).toBe('UPDATE_NOT_FOUND');
    expect(hasLedgerErrorCode(err, 'UPDATE_NOT_FOUND')).toBe(true);
    expect(hasLedgerErrorCode(err, 'CONTRACT_NOT_FOUND')).toBe(false);
    // A transport error's code is ledgerbot's own, not the participant's.
    expect(ledgerErrorCode(transport)).toBeUndefined();
    expect(ledgerErrorCode({ error: { code: 'UPDATE_NOT_FOUND' } })).toBeUndefined();
  });
});

describe('isPrunedDataAccess', () => {
  it('is PARTICIPANT_PRUNED_DATA_ACCESSED, whatever the status', () => {
    expect(isPrunedDataAccess(apiError(body('PARTICIPANT_PRUNED_DATA_ACCESSED', 9), 400))).toBe(
      true,
    );
    expect(isPrunedDataAccess(apiError(body('PARTICIPANT_PRUNED_DATA_ACCESSED', 9)))).toBe(true);
    expect(isPrunedDataAccess(apiError(body('OFFSET_OUT_OF_RANGE', 9), 400))).toBe(false);
    expect(isPrunedDataAccess(transport)).toBe(false);
  });
});

describe('isDedupPeriodRefused', () => {
  it('is a refused dedup period: too long, or anchored at a pruned offset', () => {
    expect(isDedupPeriodRefused(apiError(body('INVALID_DEDUPLICATION_PERIOD', 9), 400))).toBe(true);
    expect(isDedupPeriodRefused(apiError(body('PARTICIPANT_PRUNED_DATA_ACCESSED', 9), 400))).toBe(
      true,
    );
    expect(isDedupPeriodRefused(apiError(body('DUPLICATE_COMMAND', 10), 409))).toBe(false);
    expect(isDedupPeriodRefused(new Error('INVALID_DEDUPLICATION_PERIOD'))).toBe(false);
  });
});

describe('isKeyConflict', () => {
  it('is contention on a contract key, not on a contract', () => {
    expect(isKeyConflict(apiError(body('DUPLICATE_CONTRACT_KEY', 10), 409))).toBe(true);
    expect(isKeyConflict(apiError(body('INCONSISTENT_CONTRACT_KEY', 9), 400))).toBe(true);
    expect(isKeyConflict(apiError(body('CONTRACT_NOT_FOUND', 11), 404))).toBe(false);
    expect(isKeyConflict(undefined)).toBe(false);
  });
});

describe('isResourceMissing', () => {
  it('is category 11 (not found or not visible), not the HTTP 404 of a wrong URL', () => {
    expect(isResourceMissing(apiError(body('CONTRACT_EVENTS_NOT_FOUND', 11), 404))).toBe(true);
    expect(isResourceMissing(apiError(body('USER_NOT_FOUND', 11)))).toBe(true);
    expect(isResourceMissing(apiError(body('PERMISSION_DENIED', 7), 404))).toBe(false);
    expect(isResourceMissing(transport)).toBe(false);
  });
});

describe('earliestOffsetOf', () => {
  it('reads the earliest offset a pruned-data refusal names, and nothing else', () => {
    const pruned = {
      ...body('PARTICIPANT_PRUNED_DATA_ACCESSED', 9),
      context: { category: '9', earliest_offset: '120' },
    };
    expect(earliestOffsetOf(apiError(pruned, 400))).toBe('120');
    expect(earliestOffsetOf(apiError(body('PARTICIPANT_PRUNED_DATA_ACCESSED', 9), 400))).toBe(
      undefined,
    );
    const other = { ...body('OFFSET_OUT_OF_RANGE', 9), context: { earliest_offset: '120' } };
    expect(earliestOffsetOf(apiError(other, 400))).toBeUndefined();
  });
});
