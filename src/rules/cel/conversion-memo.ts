import { CelDecimal } from './cel-decimal.js';
import { parseDamlDate } from './daml-time-text.js';

/** `decimal(text)`: the decimal, or the RangeError every `decimal(…)` of bad text throws. */
export function decimalOf(text: string): CelDecimal {
  const d = CelDecimal.parse(text);
  if (d === null) throw new RangeError(`"${text}" is not a decimal number`);
  return d;
}

/** `date(text)`: UTC midnight of the Daml Date, or the RangeError of bad text. */
export function dateOf(text: string): Date {
  const d = parseDamlDate(text);
  if (d === null) throw new RangeError(`"${text}" is not a date: write yyyy-mm-dd`);
  return d;
}

/**
 * The conversions of one evaluation (one event, one contract): `decimal(x)` and `date(x)` of the
 * same text give the same value, so every rule that converts a field reuses the first rule's
 * result. Made per evaluation and dropped after it, never shared: a value is immutable (a
 * CelDecimal, or a Date CEL only reads), and bad text throws the same error every time.
 */
export class ConversionMemo {
  // Made on first use: most events convert one or two texts, many none.
  #decimals: Map<string, CelDecimal> | undefined;
  #dates: Map<string, Date> | undefined;
  #shared: Map<string, { readonly event: unknown; readonly value: unknown }> | undefined;

  /**
   * The value of the subexpression `key` (its text) over this `event` value, when a rule of the
   * evaluation computed it (compile-closure.ts: arithmetic over `event` alone, such as
   * `decimal(event.amount) * 2`); undefined otherwise. Kept with the event value it was computed
   * over: the rules of an interface see other `event` values (their views).
   */
  shared(key: string, event: unknown): unknown {
    const entry = this.#shared?.get(key);
    return entry !== undefined && entry.event === event ? entry.value : undefined;
  }

  share(key: string, event: unknown, value: unknown): void {
    (this.#shared ??= new Map()).set(key, { event, value });
  }

  decimal(text: string): CelDecimal {
    this.#decimals ??= new Map();
    let d = this.#decimals.get(text);
    if (d === undefined) {
      d = decimalOf(text);
      this.#decimals.set(text, d);
    }
    return d;
  }

  date(text: string): Date {
    this.#dates ??= new Map();
    let d = this.#dates.get(text);
    if (d === undefined) {
      d = dateOf(text);
      this.#dates.set(text, d);
    }
    return d;
  }
}
