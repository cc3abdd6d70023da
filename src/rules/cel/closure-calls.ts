import { CelDecimal } from './cel-decimal.js';
import {
  BAIL,
  isPlainObject,
  pair,
  unsupported,
  type Closure,
  type ClosureOptions,
  type Node,
} from './closure-parts.js';
import { dateOf, decimalOf, type ConversionMemo } from './conversion-memo.js';
import { MEMO_KEY } from './literal-calls.js';
import { isAstNode } from './visit-ast.js';

/** The closures of literals, `in`, and the calls and methods of the subset (see compile-closure.ts). */

export function valueClosure(value: unknown): Closure {
  switch (typeof value) {
    case 'string':
    case 'bigint':
    case 'boolean':
      return () => value;
    case 'object':
      if (value === null || value instanceof CelDecimal || value instanceof Date) {
        return () => value;
      }
      return unsupported();
    default:
      // Doubles, uints, bytes, durations: not in the subset.
      return unsupported();
  }
}

export function inClosure(node: Node, sub: (n: Node) => Closure): Closure {
  const [l, r] = pair(node);
  const item = sub(l);
  if (r.op === 'list' && Array.isArray(r.args)) {
    const texts = (r.args as unknown[]).map((x) =>
      isAstNode(x) && (x as Node).op === 'value' && typeof (x as Node).args === 'string'
        ? ((x as Node).args as string)
        : unsupported(),
    );
    return (values) => {
      const v = item(values);
      return typeof v === 'string' ? texts.includes(v) : BAIL;
    };
  }
  const list = sub(r);
  return (values) => {
    const v = item(values);
    const xs = list(values);
    if (typeof v !== 'string' || !Array.isArray(xs)) return BAIL;
    let found = false;
    for (const x of xs as unknown[]) {
      if (typeof x !== 'string') return BAIL;
      if (x === v) found = true;
    }
    return found;
  };
}

/** The call's name and parameters, as the parser gives them. */
function callParts(node: Node): [string, Node[]] {
  const [name, params] = node.args as [unknown, unknown];
  if (typeof name !== 'string' || !Array.isArray(params) || !params.every(isAstNode)) {
    unsupported();
  }
  return [name, params];
}

export function callClosure(
  node: Node,
  sub: (n: Node) => Closure,
  options: ClosureOptions,
): Closure {
  const [name, params] = callParts(node);
  if (params.length !== 1) unsupported();
  const param = params[0]!;
  if (name === 'has') {
    // has(x.f): whether the map x has the key f.
    if (param.op !== '.') unsupported();
    const [target, field] = param.args as [unknown, unknown];
    if (typeof field !== 'string') unsupported();
    const of = sub(target as Node);
    return (values) => {
      const at = of(values);
      return isPlainObject(at) ? Object.hasOwn(at, field) && at[field] !== undefined : BAIL;
    };
  }
  const arg = sub(param);
  const memo = options.memoizeConversions;
  switch (name) {
    case 'decimal':
      return (values) => {
        const v = arg(values);
        if (typeof v === 'string') {
          const m = memo ? (values[MEMO_KEY] as ConversionMemo | undefined) : undefined;
          return m === undefined ? decimalOf(v) : m.decimal(v);
        }
        if (v instanceof CelDecimal) return v;
        if (typeof v === 'bigint') return CelDecimal.fromBigInt(v);
        return BAIL;
      };
    case 'date':
      return (values) => {
        const v = arg(values);
        if (typeof v !== 'string') return BAIL;
        const m = memo ? (values[MEMO_KEY] as ConversionMemo | undefined) : undefined;
        return m === undefined ? dateOf(v) : m.date(v);
      };
    case 'size':
      return sizeClosure(arg);
    default:
      return unsupported();
  }
}

function sizeClosure(of: Closure): Closure {
  return (values) => {
    const v = of(values);
    return Array.isArray(v) ? BigInt(v.length) : BAIL;
  };
}

const TEXT_METHODS: Readonly<Record<string, (s: string, x: string) => boolean>> = {
  startsWith: (s, x) => s.startsWith(x),
  endsWith: (s, x) => s.endsWith(x),
  contains: (s, x) => s.includes(x),
};

export function methodClosure(node: Node, sub: (n: Node) => Closure): Closure {
  const args = node.args;
  if (!Array.isArray(args) || args.length !== 3 || !isAstNode(args[1])) unsupported();
  const [name, receiver, params] = args as [unknown, Node, unknown];
  if (typeof name !== 'string' || !Array.isArray(params) || !params.every(isAstNode)) {
    unsupported();
  }
  const target = sub(receiver);
  if (name === 'size' && params.length === 0) return sizeClosure(target);
  if (params.length !== 1) unsupported();
  const param = params[0] as Node;
  if (name === 'matches') {
    // cel-js: `new RegExp(pattern).test(text)`; a literal pattern is made once.
    if (param.op !== 'value' || typeof param.args !== 'string') unsupported();
    let re: RegExp;
    try {
      re = new RegExp(param.args);
    } catch {
      return unsupported();
    }
    return (values) => {
      const s = target(values);
      return typeof s === 'string' ? re.test(s) : BAIL;
    };
  }
  const test = Object.hasOwn(TEXT_METHODS, name) ? TEXT_METHODS[name]! : unsupported();
  const arg = sub(param);
  return (values) => {
    const s = target(values);
    const x = arg(values);
    return typeof s === 'string' && typeof x === 'string' ? test(s, x) : BAIL;
  };
}
