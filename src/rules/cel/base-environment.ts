import { Environment } from '@marcbachmann/cel-js';
import { CelDecimal } from './cel-decimal.js';
import { dateOf, decimalOf } from './conversion-memo.js';
import { DAML_DATE_RANGE, damlDateText } from './daml-time-text.js';

const TIMESTAMP = 'google.protobuf.Timestamp';
const DAY_MS = 86_400_000;

/**
 * `sum(list)`: the exact total of Numeric texts, decimals, ints and doubles (0 for an empty
 * list). CEL has no fold, and amounts arrive as text, so totals need their own function.
 */
function sumOf(items: readonly unknown[]): CelDecimal {
  let total = CelDecimal.fromBigInt(0n);
  items.forEach((item, i) => {
    total = total.plus(decimalItem(item, i));
  });
  return total;
}

function decimalItem(item: unknown, index: number): CelDecimal {
  if (item instanceof CelDecimal) return item;
  if (typeof item === 'bigint') return CelDecimal.fromBigInt(item);
  if (typeof item === 'string') {
    const d = CelDecimal.parse(item);
    if (d !== null) return d;
    throw new RangeError(`sum: item ${index} "${item}" is not a decimal number`);
  }
  if (typeof item === 'number') {
    const d = CelDecimal.fromNumber(item);
    if (d !== null) return d;
    throw new RangeError(`sum: item ${index} (${item}) is not a finite number`);
  }
  const what =
    item === null
      ? 'null'
      : Array.isArray(item)
        ? 'a list'
        : typeof item === 'object'
          ? 'a map'
          : typeof item;
  throw new RangeError(
    `sum: item ${index} is ${what}, not a number; sum a list of amounts, e.g. sum(xs.map(x, x.amount))`,
  );
}

function damlDateOf(t: Date): string {
  const text = damlDateText(t);
  if (text !== null) return text;
  throw new RangeError(`${t.toISOString()} is not a Daml Date: ${DAML_DATE_RANGE}`);
}

/**
 * The functions every ledgerbot CEL expression may use, on top of standard CEL:
 * - `decimal(x)` for Daml Numeric strings (or ints, doubles): exact `+ - * /`, comparisons and
 *   `==`, mixed with ints on either side; `string(decimal)` renders it without exponent.
 * - `sum(list)`: the exact total of a list of such values, as a decimal.
 * - `date("2025-01-31")`: a Daml Date as a CEL timestamp at UTC midnight, so it compares with
 *   `timestamp(...)` values and adds durations; `date(timestamp)` truncates to the day.
 * - `damlDate(timestamp)`: the reverse, the UTC day as Daml Date text `yyyy-mm-dd`, for a Date
 *   field whose type the rule is not checked against (with the packages, a timestamp in a Date
 *   field is sent as its day anyway: render-value.ts).
 * - `timestamp("…Z")` is standard CEL. CEL timestamps here have millisecond precision, so two
 *   Daml times that differ only in microseconds compare equal.
 * - `duration("30d")`: standard CEL durations only know h/m/s/ms/us/ns and the library does not
 *   let us replace its `duration(string)`. So a string literal argument is parsed at compile time
 *   with ledgerbot's own syntax (also d and w, as in config files) and rewritten to milliseconds;
 *   a non-literal argument keeps CEL's syntax.
 */
export function baseEnvironment(): Environment {
  const env = new Environment({ homogeneousAggregateLiterals: false })
    .registerType('Decimal', CelDecimal)
    .registerFunction('decimal(string): Decimal', decimalOf)
    .registerFunction('decimal(int): Decimal', (n: bigint) => CelDecimal.fromBigInt(n))
    .registerFunction('decimal(double): Decimal', (n: number) => {
      const d = CelDecimal.fromNumber(n);
      if (d === null) throw new RangeError(`${n} is not a finite number`);
      return d;
    })
    .registerFunction('decimal(Decimal): Decimal', (d: CelDecimal) => d)
    .registerFunction('string(Decimal): string', (d: CelDecimal) => d.toString())
    .registerFunction('sum(list): Decimal', sumOf)
    .registerFunction(`date(string): ${TIMESTAMP}`, dateOf)
    .registerFunction(
      `date(${TIMESTAMP}): ${TIMESTAMP}`,
      (t: Date) => new Date(Math.floor(t.getTime() / DAY_MS) * DAY_MS),
    )
    .registerFunction(`damlDate(${TIMESTAMP}): string`, damlDateOf);
  const arithmetic: [string, (a: CelDecimal, b: CelDecimal) => CelDecimal][] = [
    ['+', (a, b) => a.plus(b)],
    ['-', (a, b) => a.minus(b)],
    ['*', (a, b) => a.times(b)],
    ['/', (a, b) => a.dividedBy(b)],
  ];
  for (const [op, fn] of arithmetic) {
    env.registerOperator(`Decimal ${op} Decimal`, fn);
    env.registerOperator(`Decimal ${op} int`, (a: CelDecimal, b: bigint) =>
      fn(a, CelDecimal.fromBigInt(b)),
    );
    env.registerOperator(`int ${op} Decimal`, (a: bigint, b: CelDecimal) =>
      fn(CelDecimal.fromBigInt(a), b),
    );
  }
  // `!=` is derived by the library from `==`.
  const comparisons: [string, (c: number) => boolean][] = [
    ['==', (c) => c === 0],
    ['<', (c) => c < 0],
    ['<=', (c) => c <= 0],
    ['>', (c) => c > 0],
    ['>=', (c) => c >= 0],
  ];
  for (const [op, test] of comparisons) {
    env.registerOperator(`Decimal ${op} Decimal`, (a: CelDecimal, b: CelDecimal) =>
      test(a.compare(b)),
    );
    if (op !== '==') {
      env.registerOperator(`Decimal ${op} int`, (a: CelDecimal, b: bigint) =>
        test(a.compare(CelDecimal.fromBigInt(b))),
      );
    }
  }
  env.registerOperator('-Decimal', (a: CelDecimal) => a.negated());
  return env;
}
