import type { TypeError as CelTypeError } from '@marcbachmann/cel-js';
import {
  Environment,
  EvaluationError,
  ParseError,
  type ASTNode,
  type ParseResult,
} from '@marcbachmann/cel-js';
import { parseDuration } from '../../core/duration.js';
import { CelCompileError } from './cel-compile-error.js';
import { CelDecimal } from './cel-decimal.js';
import { CelEvaluationError } from './cel-evaluation-error.js';
import { compileClosure } from './compile-closure.js';
import { dateOf, decimalOf } from './conversion-memo.js';
import { DAML_DATE_RANGE, damlDateText } from './daml-time-text.js';
import type { CelProgram } from './cel-program.js';
import {
  FOLDED_FUNCTIONS,
  foldLiteralCalls,
  memoizeConversions,
  type FoldedFunction,
} from './literal-calls.js';
import { leadingEqualities } from './leading-equalities.js';
import { readPathsAndNumberOperands } from './read-paths.js';
import { isAstNode, visitAst } from './visit-ast.js';

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
function baseEnvironment(): Environment {
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

type Node = { op: string; args: unknown; range?: { start: number } };

function isNode(x: unknown): x is Node {
  return isAstNode(x);
}

/** See baseEnvironment: `duration("30d")` literals are rewritten to CEL's syntax. */
function rewriteDurationLiterals(source: string, ast: ASTNode): void {
  visitAst<Node>(ast, (node) => {
    if (node.op !== 'call' || !Array.isArray(node.args) || node.args[0] !== 'duration') return;
    const params: unknown = node.args[1];
    if (!Array.isArray(params) || params.length !== 1) return;
    const literal: unknown = params[0];
    if (!isNode(literal) || literal.op !== 'value' || typeof literal.args !== 'string') return;
    let ms: number;
    try {
      ms = parseDuration(literal.args);
    } catch (error) {
      throw new CelCompileError(
        source,
        literal.range?.start ?? 0,
        `"${literal.args}" is not a duration: write a number with a unit, such as 30s, 5m, 2h, 7d or 1h30m`,
        { cause: error },
      );
    }
    literal.args = `${ms}ms`;
  });
}

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/**
 * The deepest nesting of comprehension macros (`all`, `exists`, `exists_one`, `map`, `filter`)
 * and the offset where it happens. CEL has no loops, but nested comprehensions multiply: each
 * level iterates over a list, so their depth bounds evaluation cost.
 */
function comprehensionDepth(node: unknown, depth = 0): { depth: number; offset: number } {
  if (depth > 500) return { depth: 0, offset: 0 };
  let best = { depth: 0, offset: 0 };
  const children = Array.isArray(node) ? node : isNode(node) ? [node.args] : [];
  for (const child of children) {
    const found = comprehensionDepth(child, depth + 1);
    if (found.depth > best.depth) best = found;
  }
  if (isNode(node) && node.op === 'rcall' && Array.isArray(node.args)) {
    const name: unknown = node.args[0];
    if (typeof name === 'string' && COMPREHENSIONS.has(name)) {
      const start = (node as { start?: number }).start ?? node.range?.start ?? 0;
      return { depth: best.depth + 1, offset: best.depth === 0 ? start : best.offset };
    }
  }
  return best;
}

/** Options of CelEnvironment.compile. */
export type CelCompileOptions = {
  /** Reject expressions that nest comprehension macros deeper than this (default: no limit). */
  readonly maxComprehensionDepth?: number;
};

function errorOffset(error: ParseError | CelTypeError): number {
  return error.range?.start ?? error.node?.start ?? 0;
}

/**
 * Internal switches of the compile-time work that makes evaluation cheaper (both on by default),
 * so the ingest bench can measure each one's effect. Not user-facing: results are the same
 * either way (only a bad literal moves from an evaluation error to a compile error).
 */
export type CelTuning = {
  /** Fold `decimal("…")`, `date("…")`, `timestamp("…")` and `duration("…")` literals. */
  readonly foldLiterals?: boolean;
  /** Let `decimal(x)` and `date(x)` use the evaluation's ConversionMemo (literal-calls.ts). */
  readonly memoizeConversions?: boolean;
  /** Run conditions through closures (compile-closure.ts) where the subset decides them. */
  readonly closures?: boolean;
};

/**
 * Compiles CEL expressions with ledgerbot's extra functions. Create one per process (building an
 * environment is the expensive part) and compile each expression once, at load time.
 */
export class CelEnvironment {
  readonly #base: Environment;
  readonly #scopes = new Map<string, Environment>();
  readonly #tuning: Required<CelTuning>;
  /** `fn(text)` programs that fold literals, made on first use. */
  #folders: Map<FoldedFunction, (values: { text: string }) => unknown> | undefined;

  private constructor(base: Environment, tuning: CelTuning) {
    this.#base = base;
    this.#tuning = {
      foldLiterals: tuning.foldLiterals ?? true,
      memoizeConversions: tuning.memoizeConversions ?? true,
      closures: tuning.closures ?? true,
    };
  }

  static create(tuning: CelTuning = {}): CelEnvironment {
    return new CelEnvironment(baseEnvironment(), tuning);
  }

  /** `fn(text)` as CEL evaluates it; throws what the function throws. */
  #fold(fn: FoldedFunction, text: string): unknown {
    if (this.#folders === undefined) {
      const env = this.#base.clone().registerVariable('text', 'string');
      this.#folders = new Map(
        FOLDED_FUNCTIONS.map((name) => [
          name,
          env.parse(`${name}(text)`) as (values: { text: string }) => unknown,
        ]),
      );
    }
    return this.#folders.get(fn)!({ text });
  }

  #scope(variables: readonly string[]): Environment {
    const key = [...variables].sort().join(',');
    let env = this.#scopes.get(key);
    if (env === undefined) {
      env = this.#base.clone();
      for (const name of variables) env.registerVariable(name, 'dyn');
      this.#scopes.set(key, env);
    }
    return env;
  }

  /**
   * Parses and type-checks `source`, where only `variables` (all of dynamic type) are in scope.
   * Throws CelCompileError, with the position inside `source`, when it is not valid.
   */
  compile(
    source: string,
    variables: readonly string[],
    options: CelCompileOptions = {},
  ): CelProgram {
    const env = this.#scope(variables);
    let parsed: ParseResult;
    try {
      parsed = env.parse(source);
    } catch (error) {
      if (error instanceof ParseError) {
        throw new CelCompileError(source, errorOffset(error), error.summary, { cause: error });
      }
      throw error;
    }
    rewriteDurationLiterals(source, parsed.ast);
    if (this.#tuning.foldLiterals) {
      foldLiteralCalls(source, parsed.ast, (fn, text) => this.#fold(fn, text));
    }
    const max = options.maxComprehensionDepth;
    if (max !== undefined) {
      const nested = comprehensionDepth(parsed.ast);
      if (nested.depth > max) {
        throw new CelCompileError(
          source,
          nested.offset,
          `comprehensions (all, exists, map, filter) nest ${nested.depth} deep; at most ${max} are allowed`,
        );
      }
    }
    const checked = parsed.check();
    if (!checked.valid && checked.error !== undefined) {
      const error = checked.error;
      throw new CelCompileError(source, errorOffset(error), error.summary, { cause: error });
    }
    if (this.#tuning.memoizeConversions) memoizeConversions(parsed.ast);
    const facts = readPathsAndNumberOperands(parsed.ast);
    const closure = this.#tuning.closures
      ? compileClosure(parsed.ast, { memoizeConversions: this.#tuning.memoizeConversions })
      : null;
    return {
      source,
      reads: Object.freeze(facts.reads),
      numberOperands: Object.freeze(facts.numberOperands),
      comparisons: Object.freeze(facts.comparisons),
      guards: Object.freeze(facts.guards),
      equalities: Object.freeze(leadingEqualities(parsed.ast)),
      result: facts.result,
      closure: closure !== null,
      evaluate(values: Readonly<Record<string, unknown>>): unknown {
        if (closure !== null) {
          // Only a boolean is taken from the closure; anything else (BAIL, another value, a
          // throw) is decided by cel-js below, which gives its own value or error.
          try {
            const value = closure(values);
            if (typeof value === 'boolean') return value;
          } catch {
            // cel-js evaluates it again and reports the error in its own words.
          }
        }
        try {
          return parsed(values) as unknown;
        } catch (error) {
          if (error instanceof EvaluationError || error instanceof RangeError) {
            const summary = error instanceof EvaluationError ? error.summary : error.message;
            throw new CelEvaluationError(source, summary, { cause: error });
          }
          throw error;
        }
      },
    };
  }
}
