import { parseJsCantonError } from '../../src/ledger/js-canton-error.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import type { SubmissionPayload } from '../../src/runtime/submission-payload.js';
import type { IntentRecord } from '../../src/store/store.js';
import { payload } from './tracker-fixture.js';

/** An intent record as the journal would hand it over, without a store. */
export function intentRecord(
  overrides: Partial<IntentRecord<SubmissionPayload>> = {},
): IntentRecord<SubmissionPayload> {
  return {
    commandId: 'lb-accept-10',
    userId: 'ledgerbot',
    actAs: ['payer::1220abcd'],
    ruleId: 'accept',
    revision: 1,
    actionIndex: 0,
    trigger: { kind: 'event', updateId: 'upd-10', nodeId: 0 },
    offset: 10,
    payload: payload(),
    state: 'pending',
    attempts: 0,
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
  };
}

/** What the client throws for a participant's error with this code and category. */
export function ledgerError(
  code: string,
  category: number,
  options: { status?: number; request?: string; context?: Record<string, string> } = {},
): LedgerApiError {
  const parsed = parseJsCantonError({
    code,
    cause: `cause of ${code}`,
    correlationId: null,
    traceId: null,
    context: { category: String(category), ...options.context },
    resources: [],
    errorCategory: category,
  });
  if (parsed === undefined) throw new Error('not a JsCantonError');
  return new LedgerApiError(
    parsed,
    options.request ?? 'POST /v2/commands/async/submit',
    options.status,
  );
}
