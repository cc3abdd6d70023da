import { describe, expect, it } from 'vitest';
import { CelCompileError } from '../../../src/rules/cel/cel-compile-error.js';
import { CelDecimal } from '../../../src/rules/cel/cel-decimal.js';
import { CelEnvironment, parseDamlDate } from '../../../src/rules/cel/cel-environment.js';
import { CelEvaluationError } from '../../../src/rules/cel/cel-evaluation-error.js';

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

  it('rejects impossible dates', () => {
    expect(parseDamlDate('2025-02-30')).toBeNull();
    expect(() => run('date("2025-02-30")')).toThrow(CelEvaluationError);
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
