import { UsageError } from './usage-error.js';

/** An ISO 8601 time given on the command line (with a zone: `Z` or `+01:00`), as epoch ms. */
export function parseTimeOption(option: string, text: string): number {
  const ms = /(Z|[+-]\d\d:?\d\d)$/i.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new UsageError(
      `${option} must be an ISO 8601 time with a zone, e.g. 2026-01-05T09:00:00+01:00 or 2026-01-05T08:00:00Z, not "${text}"`,
    );
  }
  return ms;
}
