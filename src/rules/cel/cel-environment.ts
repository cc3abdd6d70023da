import type { TypeError as CelTypeError, Environment } from '@marcbachmann/cel-js';
import { EvaluationError, ParseError, type ASTNode, type ParseResult } from '@marcbachmann/cel-js';
import { parseDuration } from '../../core/duration.js';
import { CelCompileError } from './cel-compile-error.js';
import { baseEnvironment } from './base-environment.js';
import { CelEvaluationError } from './cel-evaluation-error.js';
import {
  MalformedClosureForm,
  closureFormOf,
  decodeClosureForm,
  encodeClosureForm,
} from './closure-form.js';
import { compileClosure, type Closure } from './compile-closure.js';
import type { CelProgram } from './cel-program.js';
import {
  FOLDED_FUNCTIONS,
  foldLiteralCalls,
  memoizeConversions,
  type FoldedFunction,
} from './literal-calls.js';
import { leadingEqualities } from './leading-equalities.js';
import { leadingThresholds, mayCompare, type LeadingThreshold } from './leading-thresholds.js';
import { readPathsAndNumberOperands } from './read-paths.js';
import { checkStoredProgram, type StoredProgram } from './stored-program.js';
import { isAstNode, visitAst } from './visit-ast.js';

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

/** What a program was made of (see `stored`). */
type Made = Omit<StoredProgram, 'closure'> & {
  /** A restored program: its closure form as it was stored. */
  readonly encoded?: unknown;
  /** A compiled program with closures: the AST its closure form is made of when it is stored. */
  readonly ast?: unknown;
};

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
  /** What each program this environment made was made of (see `stored`). */
  readonly #made = new WeakMap<CelProgram, Made>();
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
    const parsed = this.#parse(source, variables, options);
    const facts = readPathsAndNumberOperands(parsed.ast);
    // Built from cel-js's AST directly; its closure form is made only if the program is stored.
    const closure = this.#tuning.closures ? this.#closureOf(parsed.ast) : null;
    const made: Made = {
      source,
      variables: [...variables],
      maxComprehensionDepth: options.maxComprehensionDepth ?? null,
      reads: facts.reads,
      numberOperands: facts.numberOperands,
      comparisons: facts.comparisons,
      guards: facts.guards,
      equalities: leadingEqualities(parsed.ast),
      result: facts.result,
      ...(closure === null ? {} : { ast: parsed.ast }),
    };
    return this.#program(
      made,
      closure !== null,
      () => closure,
      () => parsed,
      () => (mayCompare(source) ? leadingThresholds(parsed.ast) : []),
    );
  }

  /**
   * The program as JSON data (see stored-program.ts), for one this environment compiled or
   * restored; undefined for any other.
   */
  stored(program: CelProgram): StoredProgram | undefined {
    const made = this.#made.get(program);
    if (made === undefined) return undefined;
    const { encoded, ast, ...rest } = made;
    let closure: unknown = encoded ?? null;
    if (ast !== undefined) {
      try {
        closure = encodeClosureForm(closureFormOf(ast));
      } catch (error) {
        // Too deep for the form: the restored program leaves it to cel-js.
        if (!(error instanceof RangeError)) throw error;
      }
    }
    return { ...rest, closure };
  }

  /**
   * The program `stored` gave, made again without parsing or checking its text: from a text that
   * compiled before, with the same environment (the compiled rule cache is written by the same
   * ledgerbot version). cel-js compiles it on its first evaluation that the closures do not
   * decide. Throws MalformedClosureForm for data that is not a stored program.
   */
  restore(json: unknown): CelProgram {
    const stored = checkStoredProgram(json);
    const { closure: encoded, ...rest } = stored;
    const made: Made = { ...rest, variables: [...stored.variables], encoded };
    // The thresholds (leading-thresholds.ts) from the stored closure form, at the first ask, so
    // a warm start skips the same rules as a cold one.
    const thresholdsOf = (): readonly LeadingThreshold[] => {
      if (encoded === null || !mayCompare(stored.source)) return [];
      try {
        return leadingThresholds(decodeClosureForm(encoded));
      } catch (error) {
        if (error instanceof MalformedClosureForm) return [];
        throw error;
      }
    };
    // The closures too are made at the first evaluation: a start does not pay for programs its
    // events never reach. A form that does not decode leaves the program to cel-js.
    const closureOf = (): Closure | null => {
      if (encoded === null || !this.#tuning.closures) return null;
      try {
        const form = decodeClosureForm(encoded);
        return this.#closureOf(form);
      } catch (error) {
        if (error instanceof MalformedClosureForm) return null;
        throw error;
      }
    };
    let parsed: ParseResult | undefined;
    const options: CelCompileOptions =
      stored.maxComprehensionDepth === null
        ? {}
        : { maxComprehensionDepth: stored.maxComprehensionDepth };
    return this.#program(
      made,
      encoded !== null && this.#tuning.closures,
      closureOf,
      () => {
        try {
          parsed ??= this.#parse(stored.source, stored.variables, options);
        } catch (error) {
          if (error instanceof CelCompileError) {
            throw new CelEvaluationError(stored.source, error.message, { cause: error });
          }
          throw error;
        }
        return parsed;
      },
      thresholdsOf,
    );
  }

  #closureOf(form: unknown): Closure | null {
    return compileClosure(form, { memoizeConversions: this.#tuning.memoizeConversions });
  }

  /** Parsed, rewritten, folded and checked (see compile); throws CelCompileError. */
  #parse(source: string, variables: readonly string[], options: CelCompileOptions): ParseResult {
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
    return parsed;
  }

  #program(
    made: Made,
    hasClosure: boolean,
    closureOf: () => Closure | null,
    parsedOf: () => ParseResult,
    thresholdsOf: () => readonly LeadingThreshold[],
  ): CelProgram {
    const source = made.source;
    let closure: Closure | null | undefined;
    let thresholds: readonly LeadingThreshold[] | undefined;
    const program: CelProgram = {
      source,
      reads: Object.freeze(made.reads),
      numberOperands: Object.freeze(made.numberOperands),
      comparisons: Object.freeze(made.comparisons),
      guards: Object.freeze(made.guards),
      equalities: Object.freeze(made.equalities),
      result: made.result,
      closure: hasClosure,
      thresholds: () => (thresholds ??= Object.freeze(thresholdsOf())),
      evaluate(values: Readonly<Record<string, unknown>>): unknown {
        if (closure === undefined) closure = closureOf();
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
          return parsedOf()(values) as unknown;
        } catch (error) {
          if (error instanceof EvaluationError || error instanceof RangeError) {
            const summary = error instanceof EvaluationError ? error.summary : error.message;
            throw new CelEvaluationError(source, summary, { cause: error });
          }
          throw error;
        }
      },
    };
    this.#made.set(program, made);
    return program;
  }
}
