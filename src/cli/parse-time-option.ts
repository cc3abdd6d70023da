import { parseIsoInstant } from '../core/iso-instant.js';
import { UsageError } from './usage-error.js';

/** An ISO 8601 time given on the command line (with a zone: `Z` or `+01:00`), as epoch ms. */
export function parseTimeOption(option: string, text: string): number {
  const ms = parseIsoInstant(text);
  if (ms === undefined) {
    throw new UsageError(
      `${option} must be an ISO 8601 time with a zone, e.g. 2026-01-05T09:00:00+01:00 or 2026-01-05T08:00:00Z, not "${text}"`,
    );
  }
  return ms;
}
