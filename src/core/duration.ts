import { LedgerbotError } from './ledgerbot-error.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

export class DurationSyntaxError extends LedgerbotError {
  constructor(input: string) {
    super(
      'INVALID_DURATION',
      `"${input}" is not a duration: write a number with a unit, such as 250ms, 30s, 5m, 2h, 7d or 1h30m`,
    );
  }
}

/** Parses "250ms", "30s", "5m", "2h", "7d", "1w" and compounds like "1h30m" into milliseconds. */
export function parseDuration(input: string): number {
  const text = input.trim();
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    matched = re.lastIndex;
  }
  if (text.length === 0 || matched !== text.length) throw new DurationSyntaxError(input);
  return Math.round(total);
}

/** The shortest exact rendering of a duration, e.g. 5400000 → "1h30m". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const size = UNIT_MS[unit];
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}
