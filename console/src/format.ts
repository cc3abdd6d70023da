// How the page writes values for people: times relative to now ("2 min ago") with the exact
// time in the tooltip, counts with separators, states as words, errors as their code and message.
import type { IntentState } from './types.js';

const numberFormat = new Intl.NumberFormat();

export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : numberFormat.format(n);
}

/** "just now", "12 s ago", "3 min ago", "in 5 min", "2 h ago", "3 d ago". */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return iso;
  const seconds = Math.round((at - now) / 1000);
  const past = seconds <= 0;
  const abs = Math.abs(seconds);
  if (abs < 5) return past ? 'just now' : 'in a moment';
  const text =
    abs < 60
      ? `${abs} s`
      : abs < 3600
        ? `${Math.round(abs / 60)} min`
        : abs < 86_400
          ? `${Math.round(abs / 3600)} h`
          : `${Math.round(abs / 86_400)} d`;
  return past ? `${text} ago` : `in ${text}`;
}

/** The exact local time, for tooltips and detail pages. */
export function exactTime(iso: string): string {
  const at = Date.parse(iso);
  return Number.isFinite(at)
    ? new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
    : iso;
}

export const STATE_LABEL: Readonly<Record<IntentState, string>> = {
  pending: 'pending',
  submitted: 'submitted',
  succeeded: 'succeeded',
  duplicate: 'duplicate',
  rejected: 'rejected',
  'dead-lettered': 'dead-lettered',
};

/** The colour class of a state: good, busy, bad, off. */
export function tone(state: string): string {
  switch (state) {
    case 'succeeded':
    case 'duplicate':
    case 'active':
    case 'running':
    case 'true':
      return 'good';
    case 'pending':
    case 'submitted':
    case 'resuming':
    case 'starting':
    case 'stopping':
    case 'skipped':
      return 'busy';
    case 'rejected':
    case 'dead-lettered':
    case 'failed':
    case 'error':
    case 'false':
      return 'bad';
    default:
      return 'off';
  }
}

/** An error as the journal keeps it (a Canton error, `{code, message}`, or text) in one line. */
export function errorText(error: unknown): string {
  if (error === null || error === undefined) return '';
  if (typeof error === 'string') return error;
  if (typeof error === 'object') {
    const e = error as Record<string, unknown>;
    const code = typeof e.code === 'string' ? e.code : undefined;
    const message =
      typeof e.message === 'string' ? e.message : typeof e.cause === 'string' ? e.cause : undefined;
    if (code !== undefined || message !== undefined) {
      return [code, message].filter((x) => x !== undefined).join(': ');
    }
  }
  return JSON.stringify(error);
}

/** A JSON value laid out for a `<pre>` block. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

/** A long id (command id, contract id) shortened for a table cell; the full id goes in a title. */
export function shortId(id: string, keep = 14): string {
  return id.length <= keep + 1 ? id : `${id.slice(0, keep)}…`;
}

/**
 * A command id in a table beside its rule: ledgerbot's ids are `lb-<rule>-<hash>`, so the part
 * that tells two apart is the hash.
 */
export function commandLabel(commandId: string, ruleId: string): string {
  const prefix = `lb-${ruleId}-`;
  return commandId.startsWith(prefix)
    ? `…${shortId(commandId.slice(prefix.length), 12)}`
    : shortId(commandId, 20);
}

/** The file's name without its folders (the full path is in the cell's title). */
export function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/** `#pkg:Module:Template` or `<hash>:Module:Template` → `Module:Template` (full id in the title). */
export function shortTemplate(id: string): string {
  const parts = id.split(':');
  return parts.length >= 3 ? parts.slice(1).join(':') : id;
}

/** An id from the page's address (`#intents/<id>`); a malformed escape is taken as written. */
export function fromHash(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
