import { describe, expect, it } from 'vitest';
import { CelCompileError } from '../../../src/rules/cel/cel-compile-error.js';
import { CelDecimal } from '../../../src/rules/cel/cel-decimal.js';
import { CelEnvironment } from '../../../src/rules/cel/cel-environment.js';
import { CelEvaluationError } from '../../../src/rules/cel/cel-evaluation-error.js';
import type { CelProgram } from '../../../src/rules/cel/cel-program.js';
import { parseDamlDate } from '../../../src/rules/cel/daml-time-text.js';
import { ConversionMemo } from '../../../src/rules/cel/conversion-memo.js';
import { MEMO_KEY } from '../../../src/rules/cel/literal-calls.js';

const cel = CelEnvironment.create();
const run = (source: string, vars: Record<string, unknown> = {}): unknown =>
  cel.compile(source, Object.keys(vars)).evaluate(vars);

describe('CelEnvironment decimals', () => {
  it('adds exactly where doubles do not', () => {
    expect(run('decimal("0.1") + decimal("0.2") == decimal("0.3")')).toBe(true);
    expect(run('0.1 + 0.2 == 0.3')).toBe(false);
  });

  it('compares Daml Numeric strings regardless of scale', () => {
    expect(run('decimal(x) == decimal("999.99")', { x: '999.9900000000' })).toBe(true);
    expect(run('decimal(x) != decimal("999.98")', { x: '999.9900000000' })).toBe(true);
    expect(run('decimal(x) < decimal("1000")', { x: '999.99' })).toBe(true);
    expect(run('decimal(x) >= decimal("1000")', { x: '999.99' })).toBe(false);
    expect(run('decimal(x) > 999', { x: '999.5' })).toBe(true);
  });

  it('does arithmetic with ints on either side and renders without exponent', () => {
    expect(run('string(decimal("1.50") * 2 + 1)')).toBe('4');
    expect(run('string(10 - decimal("0.25"))')).toBe('9.75');
    expect(run('string(-decimal("0.00000000000000000001"))')).toBe('-0.00000000000000000001');
    expect(run('string(decimal("1") / decimal("3"))')).toMatch(/^0\.3333333333/);
  });

  it('normalises to a scale half-even', () => {
    const d = run('decimal("999.99")') as CelDecimal;
    expect(d.toFixed(10)).toBe('999.9900000000');
    expect(CelDecimal.parse('0.125')!.toFixed(2)).toBe('0.12');
    expect(CelDecimal.parse('0.135')!.toFixed(2)).toBe('0.14');
    expect(CelDecimal.parse('abc')).toBeNull();
  });

  it('makes a decimal of an int, small ones once', () => {
    for (const n of [0n, 2n, 1023n, 1024n, -1n, 2n ** 70n]) {
      expect(CelDecimal.fromBigInt(n).toString()).toBe(n.toString());
    }
    expect(CelDecimal.fromBigInt(2n)).toBe(CelDecimal.fromBigInt(2n));
    expect(run('string(decimal(x) * 2 - 1)', { x: '0.75' })).toBe('0.5');
  });

  it('fails at run time on bad numbers and division by zero', () => {
    expect(() => run('decimal(x)', { x: 'twelve' })).toThrow(CelEvaluationError);
    expect(() => run('decimal("1") / decimal("0")')).toThrow(CelEvaluationError);
  });
});

describe('CelEnvironment dates, timestamps and durations', () => {
  it('compares Daml dates and times', () => {
    expect(run('date("2025-01-31") < date("2025-02-01")')).toBe(true);
    expect(run('date(d) == timestamp("2025-01-31T00:00:00Z")', { d: '2025-01-31' })).toBe(true);
    expect(run('timestamp("2025-01-31T10:00:00.5Z") > date("2025-01-31")')).toBe(true);
    expect(run('date(timestamp("2025-01-31T23:59:59Z")) == date("2025-01-31")')).toBe(true);
  });

  it('reads exactly the texts that are a day written yyyy-mm-dd', () => {
    // The definition: the text is the ISO day of the UTC midnight it names, in Daml's range
    // (years 0001-9999). Date.parse reads an ISO date-time with its year as written.
    const byIso = (text: string): number | null => {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || text.startsWith('0000')) return null;
      const ms = Date.parse(`${text}T00:00:00Z`);
      return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text ? null : ms;
    };
    const texts = ['2025-1-31', '2025-01-31T00:00:00Z', ' 2025-01-31', '20250131', ''];
    for (const year of ['0000', '0001', '0099', '0100', '1900', '2000', '2024', '2025', '9999']) {
      for (let month = 0; month <= 13; month++) {
        for (const day of [0, 1, 28, 29, 30, 31, 32]) {
          texts.push(`${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`);
        }
      }
    }
    for (const text of texts) {
      expect([text, parseDamlDate(text)?.getTime() ?? null]).toEqual([text, byIso(text)]);
    }
  });

  it('rejects impossible dates: a literal when compiled, a field when evaluated', () => {
    expect(parseDamlDate('2025-02-30')).toBeNull();
    expect(parseDamlDate('0000-01-01')).toBeNull();
    expect(parseDamlDate('0001-01-01')?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(parseDamlDate('0099-12-31')?.toISOString()).toBe('0099-12-31T00:00:00.000Z');
    const error = catchCompile('now > date("2025-02-30")', ['now']);
    expect(error.summary).toBe('"2025-02-30" is not a date: write yyyy-mm-dd');
    expect(error.offset).toBe(11);
    expect(() => run('date(d)', { d: '2025-02-30' })).toThrow(CelEvaluationError);
  });

  it('accepts ledgerbot duration syntax with days in literals', () => {
    expect(run('date("2025-01-01") + duration("30d") == date("2025-01-31")')).toBe(true);
    expect(run('duration("1w") > duration("6d")')).toBe(true);
    expect(run('duration("1h30m") == duration("90m")')).toBe(true);
  });

  it('reports a bad duration literal at its position', () => {
    const error = catchCompile('1 == 1 && duration("soon") > duration("1h")');
    expect(error.summary).toMatch(/not a duration/);
    expect(error.offset).toBe(19);
  });
});

describe('CelEnvironment literal folding', () => {
  it('reports a bad decimal, date or timestamp literal at the literal, when compiled', () => {
    const cases: [string, string, number][] = [
      ['1 == 1 && decimal("12,5") > 1', '"12,5" is not a decimal number', 18],
      ['date( "2025-13-01" ) < now', '"2025-13-01" is not a date: write yyyy-mm-dd', 6],
      ['now < timestamp("tomorrow")', 'timestamp() requires a string in ISO 8601 format', 16],
    ];
    for (const [source, summary, offset] of cases) {
      const error = catchCompile(source, ['now']);
      expect([error.summary, error.offset]).toEqual([summary, offset]);
    }
  });

  it('gives what the unfolded call gives', () => {
    const unfolded = CelEnvironment.create({ foldLiterals: false, memoizeConversions: false });
    const sources = [
      'decimal("999.99") == decimal("999.9900")',
      'string(decimal("-0.50") * 3)',
      'date("2025-01-31") + duration("1d") == date("2025-02-01")',
      'timestamp("2025-01-31T10:00:00.5Z") > date("2025-01-31")',
      'duration("1h30m") == duration("90m")',
      'decimal("1") / decimal("3")',
    ];
    for (const source of sources) {
      const folded = cel.compile(source, []).evaluate({});
      expect(folded).toEqual(unfolded.compile(source, []).evaluate({}));
    }
  });

  it('leaves a bad literal an evaluation error when folding is off', () => {
    const unfolded = CelEnvironment.create({ foldLiterals: false });
    const program = unfolded.compile('decimal("x") > 1', []);
    expect(() => program.evaluate({})).toThrow(/"x" is not a decimal number/);
  });
});

describe('CelEnvironment conversion memo', () => {
  const outcome = (program: CelProgram, vars: Record<PropertyKey, unknown>): unknown => {
    try {
      return program.evaluate(vars);
    } catch (error) {
      return error instanceof CelEvaluationError ? `error: ${error.message}` : error;
    }
  };

  it('gives the same values and errors with and without a memo, for every kind of argument', () => {
    const program = cel.compile('decimal(x) + decimal(x) >= decimal("2") && date(d) < now', [
      'x',
      'd',
      'now',
    ]);
    const now = new Date('2025-03-01T00:00:00Z');
    const xs: unknown[] = ['1.5', '0.25', 'lots', 3n, 0.5, true, null, ['1'], { a: 1 }];
    const ds: unknown[] = ['2025-01-31', '2025-02-30', now, 7n];
    const memo = new ConversionMemo();
    for (const x of xs) {
      for (const d of ds) {
        const vars = { x, d, now };
        expect(outcome(program, { ...vars, [MEMO_KEY]: memo })).toEqual(outcome(program, vars));
      }
    }
  });

  it('converts a text once per memo', () => {
    const memo = new ConversionMemo();
    const vars = { x: '12.50', [MEMO_KEY]: memo };
    const first = cel.compile('decimal(x)', ['x']).evaluate(vars);
    const second = cel.compile('decimal(x) * 1', ['x']).evaluate(vars);
    expect(first).toBe(memo.decimal('12.50'));
    expect(String(second)).toBe('12.5');
    expect(memo.date('2025-01-31')).toBe(memo.date('2025-01-31'));
    expect(() => memo.date('2025-02-30')).toThrow('"2025-02-30" is not a date: write yyyy-mm-dd');
  });
});

function catchCompile(source: string, vars: readonly string[] = []): CelCompileError {
  try {
    cel.compile(source, vars);
  } catch (error) {
    if (error instanceof CelCompileError) return error;
    throw error;
  }
  throw new Error('expected a compile error');
}

describe('CelEnvironment compile errors', () => {
  it('carries the position of a syntax error', () => {
    const error = catchCompile('this.a +', ['this']);
    expect(error.code).toBe('CEL_COMPILE_ERROR');
    expect(error.offset).toBe(8);
    expect([error.line, error.col]).toEqual([1, 9]);
  });

  it('reports an unknown variable with line and col in multi-line text', () => {
    const error = catchCompile('this.a &&\n  payer == "x"', ['this']);
    expect(error.summary).toMatch(/payer/);
    expect([error.line, error.col]).toEqual([2, 3]);
  });

  it('reports type errors before evaluation', () => {
    expect(catchCompile('1 + "a"').summary).toMatch(/overload/);
  });

  it('compiles once and evaluates many times', () => {
    const program = cel.compile('x.amount', ['x']);
    expect(program.evaluate({ x: { amount: '1' } })).toBe('1');
    expect(program.evaluate({ x: { amount: '2' } })).toBe('2');
    expect(() => program.evaluate({ x: {} })).toThrow(CelEvaluationError);
  });
});

describe('CelEnvironment stored programs', () => {
  const store = (source: string, variables: string[]): Record<string, unknown> =>
    JSON.parse(JSON.stringify(cel.stored(cel.compile(source, variables)))) as Record<
      string,
      unknown
    >;

  it('are restored with the same facts, and evaluate as compiled', () => {
    const source = 'x.currency == "USD" && decimal(x.amount) * 2 > decimal("10")';
    const compiled = cel.compile(source, ['x']);
    const restored = CelEnvironment.create().restore(store(source, ['x']));
    for (const key of [
      'source',
      'reads',
      'comparisons',
      'guards',
      'equalities',
      'result',
    ] as const) {
      expect(restored[key]).toEqual(compiled[key]);
    }
    expect(restored.closure).toBe(true);
    for (const x of [{ currency: 'USD', amount: '6' }, { currency: 'USD', amount: '4' }, {}]) {
      const outcome = (p: CelProgram): unknown => {
        try {
          return p.evaluate({ x });
        } catch (error) {
          return (error as Error).message;
        }
      };
      expect(outcome(restored)).toEqual(outcome(compiled));
    }
  });

  it('are not parsed when restored: cel-js compiles the text at the first evaluation that needs it', () => {
    // A stored text that is not CEL (a damaged file): restoring it does not notice; evaluating does.
    const stored = { ...store('x.note', ['x']), source: 'x.note ((' };
    const restored = CelEnvironment.create().restore(stored);
    expect(() => restored.evaluate({ x: { note: 'n' } })).toThrow(CelEvaluationError);
  });

  it('refuse what is not a stored program', () => {
    const good = store('x.note == null', ['x']);
    const env = CelEnvironment.create();
    for (const bad of [
      null,
      [],
      { ...good, variables: 'x' },
      { ...good, reads: [{}] },
      { ...good, result: { kind: 'path' } },
    ]) {
      expect(() => env.restore(bad)).toThrow();
    }
    // A program another environment made has no stored form here.
    expect(CelEnvironment.create().stored(cel.compile('x', ['x']))).toBeUndefined();
  });
});
