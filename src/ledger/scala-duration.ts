/**
 * Canton renders `JsCantonError.retryInfo` with Scala's `FiniteDuration.toString`: a whole number
 * and a unit name, singular when the number is 1 ("1 second", "10 seconds", "500 milliseconds").
 */
const UNIT_MS: Readonly<Record<string, number>> = {
  day: 86_400_000,
  hour: 3_600_000,
  minute: 60_000,
  second: 1000,
  millisecond: 1,
  microsecond: 1e-3,
  nanosecond: 1e-6,
};

/** Milliseconds (rounded up, so a hint is never shortened to 0), or undefined when unparseable. */
export function parseScalaDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+?)s?\s*$/i.exec(text);
  if (m === null) return undefined;
  const unit = UNIT_MS[(m[2] ?? '').toLowerCase()];
  if (unit === undefined) return undefined;
  const ms = Number(m[1]) * unit;
  return Number.isFinite(ms) ? Math.ceil(ms) : undefined;
}

/** Renders a duration the way Scala does, in the largest unit that keeps it whole. */
export function formatScalaDuration(seconds: number, nanos = 0): string {
  const totalNanos = BigInt(Math.trunc(seconds)) * 1_000_000_000n + BigInt(Math.trunc(nanos));
  const units: [string, bigint][] = [
    ['day', 86_400_000_000_000n],
    ['hour', 3_600_000_000_000n],
    ['minute', 60_000_000_000n],
    ['second', 1_000_000_000n],
    ['millisecond', 1_000_000n],
    ['microsecond', 1000n],
  ];
  for (const [name, size] of units) {
    if (totalNanos !== 0n && totalNanos % size === 0n) return plural(totalNanos / size, name);
  }
  return plural(totalNanos, 'nanosecond');
}

function plural(n: bigint, unit: string): string {
  return `${n} ${unit}${n === 1n ? '' : 's'}`;
}
