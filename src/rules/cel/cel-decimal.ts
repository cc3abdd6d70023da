import { Decimal } from 'decimal.js';

/**
 * Exact decimal arithmetic for Daml Numeric values, which travel as strings ("999.99"). Enough
 * precision for Daml's 38 digits; division rounds half-even, as Daml does when it rescales.
 */
const Exact = Decimal.clone({
  precision: 80,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -100,
  toExpPos: 100,
});

const NUMERIC_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

const PARSED_MAX = 1024;
const parsed = new Map<string, CelDecimal | null>();

const SMALL_INTS = 1024n;
const small: (CelDecimal | undefined)[] = [];

/** The CEL value of `decimal(...)`. Compare and compute with it, never with doubles. */
export class CelDecimal {
  readonly value: Decimal;

  private constructor(value: Decimal) {
    this.value = value;
  }

  /** Parses decimal text such as "12", "-0.5" or "999.9900000000"; null when it is not one. */
  static parse(text: string): CelDecimal | null {
    // Literals such as decimal("1000") are parsed on every evaluation; values are immutable, so
    // recent texts are remembered (bounded: cleared when full).
    const cached = parsed.get(text);
    if (cached !== undefined) return cached;
    const trimmed = text.trim();
    const value = NUMERIC_TEXT.test(trimmed) ? new CelDecimal(new Exact(trimmed)) : null;
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(text, value);
    return value;
  }

  static fromBigInt(n: bigint): CelDecimal {
    // Small ints are the int operands of decimal arithmetic (`decimal(x) * 2`), converted at
    // every evaluation: made once (values are immutable).
    if (n >= 0n && n < SMALL_INTS) {
      const i = Number(n);
      return (small[i] ??= new CelDecimal(new Exact(n.toString())));
    }
    return new CelDecimal(new Exact(n.toString()));
  }

  /** Doubles are converted through their shortest decimal rendering ("0.1", not 0.1000000000000000055…). */
  static fromNumber(n: number): CelDecimal | null {
    return Number.isFinite(n) ? new CelDecimal(new Exact(String(n))) : null;
  }

  plus(other: CelDecimal): CelDecimal {
    return new CelDecimal(this.value.plus(other.value));
  }

  minus(other: CelDecimal): CelDecimal {
    return new CelDecimal(this.value.minus(other.value));
  }

  times(other: CelDecimal): CelDecimal {
    return new CelDecimal(this.value.times(other.value));
  }

  /** Throws RangeError on division by zero. */
  dividedBy(other: CelDecimal): CelDecimal {
    if (other.value.isZero()) throw new RangeError('division by zero');
    return new CelDecimal(this.value.dividedBy(other.value));
  }

  negated(): CelDecimal {
    return new CelDecimal(this.value.negated());
  }

  compare(other: CelDecimal): number {
    return this.value.comparedTo(other.value);
  }

  /** Rounded half-even to `scale` places and padded, as Daml renders `Numeric scale`. */
  toFixed(scale: number): string {
    return this.value.toFixed(scale, Decimal.ROUND_HALF_EVEN);
  }

  /** Whether rounding to `scale` places would lose digits. */
  fitsScale(scale: number): boolean {
    return this.value.decimalPlaces() <= scale;
  }

  /** The shortest exact rendering, without exponent. */
  toString(): string {
    return this.value.toFixed();
  }
}
