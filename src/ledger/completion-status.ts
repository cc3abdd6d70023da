import { decodeStatusDetail } from './decode-status-detail.js';
import { bareResourceType, type JsCantonError } from './js-canton-error.js';
import { LedgerApiError } from './ledger-api-error.js';
import { formatScalaDuration } from './scala-duration.js';

const GRPC_CODE_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/** `<ERROR_ID>(<category>,<first 8 chars of the correlation id or 0>): <cause>` (NOTES.md §8.1). */
const MESSAGE_RE = /^([A-Z][A-Z0-9_]*)\((-?\d+),([^)]*)\): ?([\s\S]*)$/;
const REDACTED_RE = /^An error occurred\. Please contact the operator/;

/**
 * Turns a completion's `status` into the JsCantonError shape the HTTP errors have, so one
 * `classify` serves both. Returns undefined for success (`code` 0) and for a missing status.
 * ErrorInfo gives code, category and context; ResourceInfo the resources; RequestInfo the full
 * correlation id; RetryInfo the (error-specific) retry delay. Without ErrorInfo, the message is
 * parsed; a redacted message becomes `code: "NA"`, category -1, as the JSON layer renders it.
 */
export function parseCompletionStatus(status: unknown): JsCantonError | undefined {
  if (status === null || typeof status !== 'object') return undefined;
  const s = status as { code?: unknown; message?: unknown; details?: unknown };
  const grpcCode = typeof s.code === 'number' ? s.code : Number(s.code);
  if (!Number.isInteger(grpcCode) || grpcCode === 0) return undefined;
  const message = typeof s.message === 'string' ? s.message : '';

  let code: string | undefined;
  let errorCategory: number | undefined;
  let context: Record<string, string> = {};
  let correlationId: string | null = null;
  let retryInfo: string | null = null;
  const resources: (readonly [string, string])[] = [];
  for (const any of Array.isArray(s.details) ? (s.details as unknown[]) : []) {
    const d = decodeStatusDetail(any);
    if (d === undefined) continue;
    switch (d.type) {
      case 'ErrorInfo':
        code = d.reason;
        context = { ...d.metadata };
        if (d.metadata.category !== undefined) errorCategory = Number(d.metadata.category);
        break;
      case 'RetryInfo':
        retryInfo = formatScalaDuration(d.seconds, d.nanos);
        break;
      case 'ResourceInfo':
        resources.push([bareResourceType(d.resourceType), d.resourceName]);
        break;
      case 'RequestInfo':
        correlationId = d.requestId;
        break;
    }
  }

  const m = MESSAGE_RE.exec(message);
  let cause = m?.[4] ?? message;
  if (m !== null) {
    code ??= m[1];
    errorCategory ??= Number(m[2]);
    if (correlationId === null && m[3] !== undefined && m[3] !== '0') correlationId = m[3];
  } else if (code === undefined && REDACTED_RE.test(message)) {
    code = 'NA';
    cause = 'A security-sensitive error has been received';
  }
  const definite = context.definite_answer;
  return {
    code: code ?? GRPC_CODE_NAMES[grpcCode] ?? `GRPC_${grpcCode}`,
    cause,
    correlationId,
    traceId: context.tid ?? null,
    context,
    resources,
    errorCategory:
      errorCategory !== undefined && Number.isFinite(errorCategory) ? errorCategory : -1,
    grpcCodeValue: grpcCode,
    retryInfo,
    definiteAnswer: definite === 'true' ? true : definite === 'false' ? false : null,
  };
}

/**
 * The error a failed completion stands for, as a LedgerApiError (with no HTTP status) so that
 * `classify` and `retryDelayHintMs` treat it like a synchronous rejection; undefined on success.
 * `request` names the call the completion answers, e.g. "POST /v2/commands/async/submit".
 */
export function completionError(
  completion: { readonly status?: unknown },
  request: string,
): LedgerApiError | undefined {
  const error = parseCompletionStatus(completion.status);
  return error === undefined ? undefined : new LedgerApiError(error, request);
}
