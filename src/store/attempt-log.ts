import type { AttemptOutcome, AttemptRecord, IntentChange, IntentState } from './store.js';

/** Attempts kept per intent: the latest ones (`n` still counts every attempt). */
export const MAX_ATTEMPTS_KEPT = 50;
/** An attempt's error message is cut to this many characters. */
const MAX_MESSAGE = 300;

/**
 * One attempt as the `attempt_log` column keeps it: a short array, not an object, so the column
 * costs little on the journal's hot path: [n, submissionId, at, outcome, code?, message?].
 */
type Packed =
  | [number, string, number, AttemptOutcome]
  | [number, string, number, AttemptOutcome, string, string];

/**
 * The `attempt_log` text after `change` of an intent in state `from` at `now` (the column is
 * JSON, null before the first attempt): a new attempt on `→ submitted`, and how the attempt
 * that was out ended on the move out of `submitted`. A late completion of a `pending` intent
 * settles its latest in-doubt attempt. Pure.
 */
export function nextAttemptLog(
  text: string | null | undefined,
  /** The intent's attempts so far: numbers the first attempt listed of an older row. */
  attempts: number,
  from: IntentState,
  change: IntentChange,
  now: number,
): string | null {
  if (change.to !== 'submitted' && from !== 'submitted' && from !== 'pending') return text ?? null;
  // The two moves of almost every intent, as text: its first attempt, and that attempt's end.
  if (change.to === 'submitted' && (text === null || text === undefined)) {
    return `[[${attempts + 1},${JSON.stringify(change.submissionId)},${now},"pending"]]`;
  }
  if (from === 'submitted' && change.to !== 'submitted' && text?.endsWith(OPEN_TAIL) === true) {
    const outcome: AttemptOutcome =
      change.to === 'pending' ? (change.definite === true ? 'retry' : 'in-doubt') : change.to;
    const error = 'error' in change && change.error !== undefined ? packedError(change.error) : '';
    return `${text.slice(0, -OPEN_TAIL.length)}"${outcome}"${error}]]`;
  }
  const log = text === null || text === undefined ? [] : (JSON.parse(text) as Packed[]);
  const last = log[log.length - 1];
  const settle = (i: number, outcome: AttemptOutcome, error?: unknown): void => {
    const [n, id, at] = log[i]!;
    const e = error === undefined ? undefined : codeAndMessage(error);
    log[i] = e === undefined ? [n, id, at, outcome] : [n, id, at, outcome, e.code, e.message];
  };
  if (from === 'submitted' && last !== undefined && last[3] === 'pending') {
    const i = log.length - 1;
    switch (change.to) {
      case 'submitted':
        settle(i, 'in-doubt');
        break;
      case 'pending':
        settle(i, change.definite === true ? 'retry' : 'in-doubt', change.error);
        break;
      case 'succeeded':
      case 'duplicate':
        settle(i, change.to);
        break;
      case 'rejected':
      case 'dead-lettered':
        settle(i, change.to, change.error);
        break;
    }
  } else if (from === 'pending' && (change.to === 'succeeded' || change.to === 'duplicate')) {
    for (let i = log.length - 1; i >= 0; i--) {
      if (log[i]![3] === 'in-doubt') {
        settle(i, change.to);
        break;
      }
    }
  }
  if (change.to === 'submitted') {
    log.push([(last?.[0] ?? attempts) + 1, change.submissionId, now, 'pending']);
    if (log.length > MAX_ATTEMPTS_KEPT) log.splice(0, log.length - MAX_ATTEMPTS_KEPT);
  }
  return log.length === 0 ? null : JSON.stringify(log);
}

/** The attempts of an `attempt_log` text, oldest first. */
export function attemptsOf(text: string | null | undefined): AttemptRecord[] {
  if (text === null || text === undefined) return [];
  return (JSON.parse(text) as Packed[]).map(([n, submissionId, at, outcome, code, message]) => ({
    n,
    submissionId,
    at,
    outcome,
    ...(code === undefined ? {} : { error: { code, message: message ?? '' } }),
  }));
}

/** How the text of a log whose last attempt is still out ends. */
const OPEN_TAIL = '"pending"]]';

function packedError(error: unknown): string {
  const e = codeAndMessage(error);
  return `,${JSON.stringify(e.code)},${JSON.stringify(e.message)}`;
}

function codeAndMessage(error: unknown): { code: string; message: string } {
  if (typeof error !== 'object' || error === null) {
    return { code: 'ERROR', message: String(error).slice(0, MAX_MESSAGE) };
  }
  const r = error as { code?: unknown; message?: unknown; cause?: unknown };
  const message =
    typeof r.message === 'string' ? r.message : typeof r.cause === 'string' ? r.cause : '';
  return {
    code: typeof r.code === 'string' ? r.code : 'ERROR',
    message: message.slice(0, MAX_MESSAGE),
  };
}

/** The `attempt_log` text of `attempts` as `attemptsOf` reads them back (null for none). */
export function packAttempts(attempts: readonly AttemptRecord[]): string | null {
  if (attempts.length === 0) return null;
  return JSON.stringify(
    attempts.map((a): Packed =>
      a.error === undefined
        ? [a.n, a.submissionId, a.at, a.outcome]
        : [a.n, a.submissionId, a.at, a.outcome, a.error.code, a.error.message],
    ),
  );
}
