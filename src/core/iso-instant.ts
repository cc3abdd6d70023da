/**
 * `2026-01-05T09:00:00+01:00`, `2026-01-05T08:00Z`, `…T08:00:00.123Z`: a date, a time and a zone.
 * `Date.parse` alone takes far more (`"1"` is the year 2001, a time without a zone is local
 * time), and an instant a user gives must mean one thing.
 */
const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:?\d\d)$/i;

/** The epoch milliseconds of an ISO 8601 instant with a zone; undefined for anything else. */
export function parseIsoInstant(text: string): number | undefined {
  if (!ISO_INSTANT.test(text)) return undefined;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over into March: the day must exist in its month.
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d ? ms : undefined;
}
