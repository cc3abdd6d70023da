import type { JsCantonError as WireJsCantonError } from './wire/wire-types.js';

/**
 * A JsCantonError as the client hands it on. Absent optionals are `null` here whether the
 * participant wrote `null` (it does, NOTES.md §0.4) or left the field out. `resources` holds
 * bare resource types (`CONTRACT_ID`) whichever form the participant used (see
 * `bareResourceType`).
 */
export type JsCantonError = {
  readonly code: string;
  readonly cause: string;
  readonly correlationId: string | null;
  readonly traceId: string | null;
  readonly context: Readonly<Record<string, string>>;
  readonly resources: readonly (readonly [string, string])[];
  /** The ErrorCategory id; -1 for redacted (`code: "NA"`) and non-Canton errors. */
  readonly errorCategory: number;
  readonly grpcCodeValue: number | null;
  /** The category's default retry delay as Scala renders it, e.g. "1 second". */
  readonly retryInfo: string | null;
  readonly definiteAnswer: boolean | null;
};

export type { WireJsCantonError };

/** True for a value shaped like a JsCantonError (used to tell error frames from data frames). */
export function isJsCantonError(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && typeof v.cause === 'string' && 'errorCategory' in v;
}

/** Narrows an unknown JSON value to a JsCantonError, or returns undefined when it is not one. */
export function parseJsCantonError(value: unknown): JsCantonError | undefined {
  if (!isJsCantonError(value)) return undefined;
  const v = value as Record<string, unknown>;
  const context: Record<string, string> = {};
  if (v.context !== null && typeof v.context === 'object') {
    for (const [k, x] of Object.entries(v.context as Record<string, unknown>)) {
      if (typeof x === 'string') context[k] = x;
      else if (x !== null && x !== undefined) context[k] = JSON.stringify(x);
    }
  }
  const resources: (readonly [string, string])[] = [];
  if (Array.isArray(v.resources)) {
    for (const r of v.resources as unknown[]) {
      if (Array.isArray(r) && typeof r[0] === 'string' && typeof r[1] === 'string') {
        resources.push([bareResourceType(r[0]), r[1]]);
      } else if (r !== null && typeof r === 'object') {
        // Tuple2 may also come as {_1, _2}.
        const t = r as { _1?: unknown; _2?: unknown };
        if (typeof t._1 === 'string' && typeof t._2 === 'string') {
          resources.push([bareResourceType(t._1), t._2]);
        }
      }
    }
  }
  const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);
  const num = (x: unknown): number | null => (typeof x === 'number' ? x : null);
  return {
    code: v.code as string,
    cause: v.cause as string,
    correlationId: str(v.correlationId),
    traceId: str(v.traceId),
    context,
    resources,
    errorCategory: typeof v.errorCategory === 'number' ? v.errorCategory : Number(v.errorCategory),
    grpcCodeValue: num(v.grpcCodeValue),
    retryInfo: str(v.retryInfo),
    definiteAnswer: typeof v.definiteAnswer === 'boolean' ? v.definiteAnswer : null,
  };
}

const ERROR_RESOURCE_RE = /^ErrorResource\((.+)\)$/;

/**
 * `CONTRACT_ID` for both `"ErrorResource(CONTRACT_ID)"` (an error that came through gRPC: Canton
 * prints the case class) and `"CONTRACT_ID"` (an error made in the JSON layer), so readers of
 * `resources` compare against the bare name only.
 */
export function bareResourceType(type: string): string {
  return ERROR_RESOURCE_RE.exec(type.trim())?.[1]?.trim() ?? type;
}
