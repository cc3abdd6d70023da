import { retryInfoOfCategory } from './canton-error-codes.js';
import {
  errorInfo,
  requestInfo,
  resourceInfo,
  retryInfo,
  type ProtoAny,
} from './rpc-status-details.js';
import type { SandboxApiError } from './sandbox-api-error.js';

/** What the renderers need to know about the request the error belongs to. */
export type ErrorEnv = {
  /** The participant's name (the part of its id before `::`). */
  readonly participant: string;
  /** 32 hex chars, as Canton's trace ids. */
  readonly traceId: string;
  /** The submission id when the error concerns a submission. */
  readonly correlationId?: string | undefined;
};

/**
 * JsCantonError in Canton's field order. Its optionals are `null` when absent, as Canton's circe
 * codec prints them (NOTES.md "Corrections"): `correlationId` without a submission,
 * `retryInfo` for categories that are not retryable, `definiteAnswer` for errors that came
 * through gRPC (only the JSON layer's own errors set it).
 */
export type JsCantonErrorBody = {
  code: string;
  cause: string;
  correlationId: string | null;
  traceId: string | null;
  context: Record<string, string>;
  resources: [string, string][];
  errorCategory: number;
  grpcCodeValue: number | null;
  retryInfo: string | null;
  definiteAnswer: boolean | null;
};

export const REDACTED_CAUSE = 'A security-sensitive error has been received';

/** Canton's full error context: category, definite_answer, participant and tid first. */
function fullContext(err: SandboxApiError, env: ErrorEnv): Record<string, string> {
  return {
    category: String(err.category),
    definite_answer: String(err.definiteAnswer),
    participant: env.participant,
    tid: env.traceId,
    ...err.context,
  };
}

/** The HTTP error body and websocket error frame. */
export function renderJsCantonError(err: SandboxApiError, env: ErrorEnv): JsCantonErrorBody {
  if (err.redacted) {
    return {
      code: 'NA',
      cause: REDACTED_CAUSE,
      correlationId: null,
      traceId: env.traceId,
      context: { ...err.redactedContext },
      resources: [],
      errorCategory: -1,
      grpcCodeValue: err.grpcCode,
      retryInfo: null,
      definiteAnswer: null,
    };
  }
  const corr = env.correlationId;
  return {
    code: err.cantonCode,
    cause: err.cantonCause,
    correlationId: corr === undefined || corr === '' ? null : corr,
    traceId: env.traceId,
    context: fullContext(err, env),
    // Errors that came through gRPC are decoded back into ErrorResource case classes, and the
    // JSON layer prints those with toString (JsCantonError.fromDecodedCantonError); its own
    // errors keep the bare name. Completion statuses (ResourceInfo) keep the bare name too.
    resources: err.resources.map(([t, n]) => [err.jsonLayer ? t : `ErrorResource(${t})`, n]),
    errorCategory: err.category,
    grpcCodeValue: err.grpcCode,
    retryInfo: retryInfoOfCategory(err.category) ?? null,
    definiteAnswer: err.jsonLayer ? err.definiteAnswer : null,
  };
}

export type JsStatusBody = { code: number; message: string; details: ProtoAny[] };

export const OK_STATUS: JsStatusBody = Object.freeze({
  code: 0,
  message: '',
  details: [],
});

/** The status of a rejected completion: gRPC code, Canton's message format and the rpc details. */
export function renderRejectionStatus(err: SandboxApiError, env: ErrorEnv): JsStatusBody {
  const corr = env.correlationId ?? '';
  const shortCorr = corr === '' ? '0' : corr.slice(0, 8);
  const details: ProtoAny[] = [errorInfo(err.cantonCode, fullContext(err, env))];
  if (retryInfoOfCategory(err.category) !== undefined) details.push(retryInfo(1));
  if (corr !== '') details.push(requestInfo(corr));
  for (const [type, name] of err.resources) details.push(resourceInfo(type, name));
  return {
    code: err.grpcCode,
    message: `${err.cantonCode}(${err.category},${shortCorr}): ${err.cantonCause}`,
    details,
  };
}
