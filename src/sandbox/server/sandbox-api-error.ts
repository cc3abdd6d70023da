import { LedgerbotError } from '../../core/ledgerbot-error.js';
import {
  categoryOf,
  httpStatusOfGrpc,
  isRedactedCategory,
  isCantonErrorCode,
  type CantonErrorCode,
} from './canton-error-codes.js';
import { grpcCodeOfCategory, type EngineError } from '../engine/engine-error.js';

export type SandboxApiErrorOptions = {
  /** Error-specific context keys (Canton's `context`, ErrorInfo metadata). */
  readonly context?: Readonly<Record<string, string>>;
  readonly resources?: readonly (readonly [string, string])[];
  /** Canton's `definite_answer`; false unless the rejection is known to be final. */
  readonly definiteAnswer?: boolean;
  /**
   * Raised by the JSON layer itself rather than the gRPC services: Canton does not redact these
   * (NOTES.md §8.1), and sets `definiteAnswer` directly.
   */
  readonly jsonLayer?: boolean;
  /** Overrides the status derived from the category (413 for list overflow). */
  readonly httpStatus?: number;
  /** For redacted auth errors that carry extra context (the "invalid token" 403). */
  readonly redactedContext?: Readonly<Record<string, string>>;
  /** Required for codes outside the table (errors the engine reports). */
  readonly category?: number;
  readonly cause?: unknown;
};

/**
 * A Canton error the sandbox answers with: thrown by handlers and the submission pipeline, and
 * rendered as a JsCantonError body, an error frame or a completion status.
 */
export class SandboxApiError extends LedgerbotError {
  readonly cantonCode: string;
  readonly cantonCause: string;
  readonly category: number;
  readonly grpcCode: number;
  readonly httpStatus: number;
  readonly context: Readonly<Record<string, string>>;
  readonly resources: readonly (readonly [string, string])[];
  readonly definiteAnswer: boolean;
  readonly jsonLayer: boolean;
  readonly redactedContext: Readonly<Record<string, string>>;
  /** The submission id, when the error concerns a submission (rendered as `correlationId`). */
  correlationId: string | undefined;

  constructor(code: CantonErrorCode, cause: string, options?: SandboxApiErrorOptions);
  constructor(
    code: string,
    cause: string,
    options: SandboxApiErrorOptions & { readonly category: number },
  );
  constructor(code: string, cause: string, options: SandboxApiErrorOptions = {}) {
    super('SANDBOX_API_ERROR', `${code}: ${cause}`, { cause: options.cause });
    this.cantonCode = code;
    this.cantonCause = cause;
    this.category =
      options.category ?? (isCantonErrorCode(code) ? categoryOf(code) : /* unreachable */ 4);
    this.grpcCode = grpcCodeOfCategory(this.category);
    this.httpStatus = options.httpStatus ?? httpStatusOfGrpc(this.grpcCode);
    this.context = options.context ?? {};
    this.resources = options.resources ?? [];
    this.definiteAnswer = options.definiteAnswer ?? false;
    this.jsonLayer = options.jsonLayer ?? false;
    this.redactedContext = options.redactedContext ?? {};
    this.correlationId = undefined;
  }

  get redacted(): boolean {
    return !this.jsonLayer && isRedactedCategory(this.category);
  }
}

/** The engine reports errors as data; this makes them throwable and renderable. */
export function fromEngineError(e: EngineError, definiteAnswer = false): SandboxApiError {
  return new SandboxApiError(e.code, e.cause, {
    category: e.category,
    ...(e.context === undefined ? {} : { context: e.context }),
    ...(e.resources === undefined ? {} : { resources: e.resources }),
    definiteAnswer,
  });
}
