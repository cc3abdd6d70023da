import type { Random } from '../../core/random.js';
import { isCantonErrorCode, type CantonErrorCode } from './canton-error-codes.js';
import { instantString } from './frames.js';
import { SandboxApiError } from './sandbox-api-error.js';

export type CodeRate = { readonly code: CantonErrorCode; readonly rate: number };

/**
 * The errors Canton ends an open stream with when its authorization goes (NOTES.md
 * "Corrections", [C35] auth/AuthorizationChecksErrors.scala): the token expired, or the user's
 * rights changed. Both are category 2 (ABORTED) and not redacted.
 */
export const STREAM_ERROR_CODES = ['ACCESS_TOKEN_EXPIRED', 'STALE_STREAM_AUTHORIZATION'] as const;
export type StreamErrorCode = (typeof STREAM_ERROR_CODES)[number];
export type StreamErrorRate = { readonly code: StreamErrorCode; readonly rate: number };

/** The faults `POST /sandbox/faults` sets (docs/sandbox.md). All optional; absent = off. */
export type Faults = {
  readonly closeStreamsAfterMessages?: number;
  readonly closeStreamsEveryMs?: number;
  /**
   * The update and completion streams are down: the open ones are dropped when it is set, and
   * every new one is refused (the upgrade answers 503 SERVICE_NOT_RUNNING) until it is cleared.
   */
  readonly refuseStreams?: boolean;
  readonly submitErrors?: readonly CodeRate[];
  readonly completionErrors?: readonly CodeRate[];
  /**
   * Open update and completion streams end with one of these errors (an error frame, then a
   * normal close): each open stream draws once when the fault is set, and every frame a stream
   * is about to send draws again while it stays set.
   */
  readonly streamErrors?: readonly StreamErrorRate[];
  readonly loseSubmitResponseRate?: number;
  readonly dropCompletionRate?: number;
  readonly completionDelayMs?: readonly [number, number];
  readonly httpLatencyMs?: number | readonly [number, number];
};

/**
 * What the injector has done since the sandbox started (`GET /sandbox/fault-stats`): clearing the
 * faults does not reset it, so a harness can read the totals after its drain.
 */
export type FaultStats = {
  /** Synchronous rejections, per code. */
  readonly submitErrors: Readonly<Record<string, number>>;
  /** Rejections in the completion, per code. */
  readonly completionErrors: Readonly<Record<string, number>>;
  /** Update and completion streams ended with an auth error (streamErrors), per code. */
  readonly streamErrors: Readonly<Record<string, number>>;
  readonly lostSubmitResponses: number;
  readonly droppedCompletions: number;
  readonly delayedSubmissions: number;
  readonly delayedRequests: number;
  /** Update and completion streams dropped (closeStreamsEveryMs, closeStreamsAfterMessages, refuseStreams). */
  readonly droppedStreams: number;
  /** Update and completion stream connections refused (refuseStreams). */
  readonly refusedStreams: number;
};

type MutableStats = { -readonly [K in keyof FaultStats]: FaultStats[K] } & {
  submitErrors: Record<string, number>;
  completionErrors: Record<string, number>;
  streamErrors: Record<string, number>;
};

export class FaultConfigError extends Error {}

function rate(value: unknown, field: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw new FaultConfigError(`${field} must be a number between 0 and 1`);
  }
  return value;
}

function nonNegative(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new FaultConfigError(`${field} must be a non-negative number`);
  }
  return value;
}

function range(value: unknown, field: string): readonly [number, number] {
  if (typeof value === 'number') {
    const v = nonNegative(value, field);
    return [v, v];
  }
  if (!Array.isArray(value) || value.length !== 2) {
    throw new FaultConfigError(`${field} must be [min, max] in milliseconds`);
  }
  const min = nonNegative(value[0], `${field}[0]`);
  const max = nonNegative(value[1], `${field}[1]`);
  if (max < min) throw new FaultConfigError(`${field}: max must not be below min`);
  return [min, max];
}

function codeRates(value: unknown, field: string): readonly CodeRate[] {
  if (!Array.isArray(value)) throw new FaultConfigError(`${field} must be a list of {code, rate}`);
  return value.map((item: unknown, i) => {
    const o = (item ?? {}) as { code?: unknown; rate?: unknown };
    if (typeof o.code !== 'string' || !isCantonErrorCode(o.code)) {
      throw new FaultConfigError(
        `${field}[${i}].code must be a known Canton error code (e.g. SEQUENCER_BACKPRESSURE)`,
      );
    }
    return { code: o.code, rate: rate(o.rate, `${field}[${i}].rate`) };
  });
}

function streamErrorRates(value: unknown): readonly StreamErrorRate[] {
  if (!Array.isArray(value))
    throw new FaultConfigError('streamErrors must be a list of {code, rate}');
  return value.map((item: unknown, i) => {
    const o = (item ?? {}) as { code?: unknown; rate?: unknown };
    const code = STREAM_ERROR_CODES.find((c) => c === o.code);
    if (code === undefined) {
      throw new FaultConfigError(
        `streamErrors[${i}].code must be one of ${STREAM_ERROR_CODES.join(', ')}`,
      );
    }
    return { code, rate: rate(o.rate, `streamErrors[${i}].rate`) };
  });
}

const KNOWN = new Set([
  'closeStreamsAfterMessages',
  'closeStreamsEveryMs',
  'refuseStreams',
  'submitErrors',
  'completionErrors',
  'streamErrors',
  'loseSubmitResponseRate',
  'dropCompletionRate',
  'completionDelayMs',
  'httpLatencyMs',
]);

/** Validates a faults request body; unknown keys are rejected so typos do not silently do nothing. */
export function parseFaults(body: unknown): Faults {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new FaultConfigError('the faults body must be a JSON object');
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!KNOWN.has(key)) throw new FaultConfigError(`unknown fault "${key}"`);
  }
  const out: { -readonly [K in keyof Faults]: Faults[K] } = {};
  if (b.closeStreamsAfterMessages !== undefined) {
    const n = nonNegative(b.closeStreamsAfterMessages, 'closeStreamsAfterMessages');
    if (!Number.isInteger(n) || n < 1)
      throw new FaultConfigError('closeStreamsAfterMessages must be a positive integer');
    out.closeStreamsAfterMessages = n;
  }
  if (b.closeStreamsEveryMs !== undefined) {
    const n = nonNegative(b.closeStreamsEveryMs, 'closeStreamsEveryMs');
    if (n < 1) throw new FaultConfigError('closeStreamsEveryMs must be at least 1');
    out.closeStreamsEveryMs = n;
  }
  if (b.refuseStreams !== undefined) {
    if (typeof b.refuseStreams !== 'boolean') {
      throw new FaultConfigError('refuseStreams must be true or false');
    }
    // Kept when false too: a POST merges over the active faults, so false must override true.
    out.refuseStreams = b.refuseStreams;
  }
  if (b.submitErrors !== undefined) out.submitErrors = codeRates(b.submitErrors, 'submitErrors');
  if (b.completionErrors !== undefined)
    out.completionErrors = codeRates(b.completionErrors, 'completionErrors');
  if (b.streamErrors !== undefined) out.streamErrors = streamErrorRates(b.streamErrors);
  if (b.loseSubmitResponseRate !== undefined)
    out.loseSubmitResponseRate = rate(b.loseSubmitResponseRate, 'loseSubmitResponseRate');
  if (b.dropCompletionRate !== undefined)
    out.dropCompletionRate = rate(b.dropCompletionRate, 'dropCompletionRate');
  if (b.completionDelayMs !== undefined)
    out.completionDelayMs = range(b.completionDelayMs, 'completionDelayMs');
  if (b.httpLatencyMs !== undefined) {
    out.httpLatencyMs =
      typeof b.httpLatencyMs === 'number'
        ? nonNegative(b.httpLatencyMs, 'httpLatencyMs')
        : range(b.httpLatencyMs, 'httpLatencyMs');
  }
  return out;
}

/**
 * The active faults and the decisions they make. Every decision draws from the seeded Random in
 * a fixed order, so a run with the same seed and the same request sequence fails the same way.
 */
export class FaultInjector {
  #faults: Faults = {};
  readonly #random: Random;
  readonly #stats: MutableStats = {
    submitErrors: {},
    completionErrors: {},
    streamErrors: {},
    lostSubmitResponses: 0,
    droppedCompletions: 0,
    delayedSubmissions: 0,
    delayedRequests: 0,
    droppedStreams: 0,
    refusedStreams: 0,
  };

  constructor(random: Random) {
    this.#random = random;
  }

  get faults(): Faults {
    return this.#faults;
  }

  get active(): boolean {
    return Object.keys(this.#faults).length > 0;
  }

  /** Replaces the active faults with `faults` merged over the current ones. */
  set(faults: Faults): void {
    this.#faults = { ...this.#faults, ...faults };
  }

  clear(): void {
    this.#faults = {};
  }

  /** A copy of the counters. */
  stats(): FaultStats {
    return {
      ...this.#stats,
      submitErrors: { ...this.#stats.submitErrors },
      completionErrors: { ...this.#stats.completionErrors },
      streamErrors: { ...this.#stats.streamErrors },
    };
  }

  /** The stream hub reports the streams a stream fault dropped. */
  countDroppedStreams(n: number): void {
    this.#stats.droppedStreams += n;
  }

  /** Whether a new update or completion stream is refused now; counts it if so. */
  refuseStream(): boolean {
    if (this.#faults.refuseStreams !== true) return false;
    this.#stats.refusedStreams += 1;
    return true;
  }

  #pick<C extends string>(
    rates: readonly { readonly code: C; readonly rate: number }[] | undefined,
  ): C | undefined {
    if (rates === undefined) return undefined;
    for (const r of rates) {
      if (r.rate > 0 && this.#random.next() < r.rate) return r.code;
    }
    return undefined;
  }

  #chance(p: number | undefined): boolean {
    return p !== undefined && p > 0 && this.#random.next() < p;
  }

  #within(r: readonly [number, number]): number {
    return r[0] === r[1] ? r[0] : r[0] + Math.floor(this.#random.next() * (r[1] - r[0] + 1));
  }

  submitError(): SandboxApiError | undefined {
    const code = this.#pick(this.#faults.submitErrors);
    if (code === undefined) return undefined;
    this.#stats.submitErrors[code] = (this.#stats.submitErrors[code] ?? 0) + 1;
    return injected(code);
  }

  completionError(): SandboxApiError | undefined {
    const code = this.#pick(this.#faults.completionErrors);
    if (code === undefined) return undefined;
    this.#stats.completionErrors[code] = (this.#stats.completionErrors[code] ?? 0) + 1;
    return injected(code);
  }

  /** Whether an open update or completion stream ends now, and with what (streamErrors). */
  streamError(nowMs: number): SandboxApiError | undefined {
    const code = this.#pick(this.#faults.streamErrors);
    if (code === undefined) return undefined;
    this.#stats.streamErrors[code] = (this.#stats.streamErrors[code] ?? 0) + 1;
    return streamAuthError(code, nowMs);
  }

  loseSubmitResponse(): boolean {
    const lose = this.#chance(this.#faults.loseSubmitResponseRate);
    if (lose) this.#stats.lostSubmitResponses += 1;
    return lose;
  }

  dropCompletion(): boolean {
    const drop = this.#chance(this.#faults.dropCompletionRate);
    if (drop) this.#stats.droppedCompletions += 1;
    return drop;
  }

  completionDelayMs(): number {
    const r = this.#faults.completionDelayMs;
    const ms = r === undefined ? 0 : this.#within(r);
    if (ms > 0) this.#stats.delayedSubmissions += 1;
    return ms;
  }

  httpLatencyMs(): number {
    const l = this.#faults.httpLatencyMs;
    const ms = l === undefined ? 0 : typeof l === 'number' ? l : this.#within(l);
    if (ms > 0) this.#stats.delayedRequests += 1;
    return ms;
  }
}

function injected(code: CantonErrorCode): SandboxApiError {
  return new SandboxApiError(code, `Injected by the sandbox's fault injection (${code})`, {
    definiteAnswer: code === 'DUPLICATE_COMMAND',
  });
}

/** Canton's causes: AuthorizationError.Expired's reason, StaleUserManagementBasedStreamClaims'. */
function streamAuthError(code: StreamErrorCode, nowMs: number): SandboxApiError {
  const now = instantString(nowMs);
  const cause =
    code === 'ACCESS_TOKEN_EXPIRED'
      ? `Claims were valid until ${now}, current time is ${now}`
      : 'Stale stream authorization. Retry quickly.';
  return new SandboxApiError(code, cause, { category: 2 });
}
