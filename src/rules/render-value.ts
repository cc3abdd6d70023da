import { Optional } from '@marcbachmann/cel-js';
import { LedgerbotError } from '../core/ledgerbot-error.js';
import { CelDecimal } from './cel/cel-decimal.js';
import { CelEvaluationError } from './cel/cel-evaluation-error.js';
import { numberText } from './daml-number-text.js';
import { typedJson, unsignedValue } from './typed-json.js';
import type {
  CompiledExpression,
  CompiledValue,
  DamlRendering,
  JsonValue,
  SourcePos,
} from './compiled-rule.js';

/**
 * A `${{ }}` value that could not be rendered: the expression failed, or its result has no
 * Daml JSON form. `expression` is null when the problem is not one expression's (a bad shape).
 */
export class RenderFailure extends LedgerbotError {
  readonly expression: string | null;
  readonly pos: SourcePos;

  constructor(message: string, expression: string | null, pos: SourcePos) {
    super('RENDER_FAILURE', message);
    this.expression = expression;
    this.pos = pos;
  }
}

/** CEL values nest no deeper than the event data they come from; this is a backstop. */
const MAX_DEPTH = 200;

/**
 * Renders a compiled action value into the JSON a command carries (Daml-LF JSON as the JSON
 * Ledger API reads it). Throws RenderFailure.
 *
 * Whole-value templates keep their type: a list stays a list, a map a record, a bool a bool.
 * Every number becomes its exact decimal text (see daml-number-text.ts: Canton 3.5 reads Int64
 * only from a string): CEL ints and uints "123", doubles without exponent, `decimal()` values
 * their exact text. Timestamps become their ISO-8601 text (Daml Time reads it).
 * Literals were turned into text when the rule was compiled.
 *
 * Where the packages gave the field's Daml type (`rendering`, from daml-rendering.ts), a CEL
 * value is written as that type reads it (typed-json.ts): a timestamp in a Date as its day, a
 * decimal in an Int as a whole number, … A value it cannot hold is a RenderFailure.
 */
export function renderValue(
  value: CompiledValue,
  variables: Readonly<Record<string, unknown>>,
  numbers: NumberRendering = 'text',
): JsonValue {
  switch (value.kind) {
    case 'literal':
      return value.value;
    case 'expression':
      return toJson(
        run(value.expression, variables),
        value.expression,
        0,
        numbers,
        value.rendering,
      );
    case 'interpolation': {
      let text = '';
      for (const part of value.parts) {
        text += typeof part === 'string' ? part : toText(run(part, variables), part);
      }
      return text;
    }
    case 'list':
      return value.items.map((item) => renderValue(item, variables, numbers));
    case 'record': {
      const out: Record<string, JsonValue> = {};
      for (const field of value.fields) {
        out[field.name] = renderValue(field.value, variables, numbers);
      }
      return out;
    }
  }
}

/**
 * `text`: numbers become their exact decimal text, as Daml values need. `keep`: ints and doubles
 * stay JSON numbers, for fields that must be text anyway (contractId, workflowId), so that the
 * caller can say a number is not a contract id rather than send "0" as one.
 */
export type NumberRendering = 'text' | 'keep';

/** Runs one expression; any failure becomes a RenderFailure at the expression's position. */
export function run(
  expression: CompiledExpression,
  variables: Readonly<Record<string, unknown>>,
): unknown {
  try {
    return expression.program.evaluate(variables);
  } catch (error) {
    throw new RenderFailure(errorSummary(error), expression.source, expression.pos);
  }
}

/** The one-line reason of an evaluation failure, without the expression text. */
export function errorSummary(error: unknown): string {
  if (error instanceof CelEvaluationError) return withNumberTextHint(withNullHint(error.summary));
  // The library can still throw plain errors (a stack overflow on absurd input, say): they are
  // this event's problem, never the bot's, so they are reported the same way.
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * An empty Optional, and a field the participant left out of a record, read `null`; the CEL
 * library's message for using one ("no such overload: dyn<null> > int") does not say so.
 */
function withNullHint(summary: string): string {
  return /\bnull\b/.test(summary)
    ? `${summary} (an empty Optional, or a field the record leaves out, reads null: check it with != null first)`
    : summary;
}

/**
 * Daml Numeric and Int64 values arrive as text, so `event.createArgument.amount >= 1000` fails
 * with the library's "no such overload: dyn<string> >= int", which does not say why.
 */
const TEXT_AS_NUMBER =
  /no such overload: (?:(?:dyn<)?string>? [-+*/%<>=!]{1,2} (?:dyn<)?(?:int|uint|double|Decimal)>?|(?:dyn<)?(?:int|uint|double|Decimal)>? [-+*/%<>=!]{1,2} (?:dyn<)?string>?|-(?:dyn<)?string>?)(?:$|\s)/;

function withNumberTextHint(summary: string): string {
  return TEXT_AS_NUMBER.test(summary)
    ? `${summary} (Daml Numeric and Int64 values are text: compute and compare them with decimal(…), e.g. decimal(event.createArgument.amount) >= decimal("1000"), or int(…) for an Int64)`
    : summary;
}

function describe(value: unknown): string {
  if (value instanceof Uint8Array) return 'bytes';
  if (typeof value === 'object' && value !== null) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    if (name === 'Duration') return 'a duration';
    if (typeof name === 'string' && name !== 'Object') return `a ${name}`;
  }
  return typeof value;
}

function toJson(
  value: unknown,
  expr: CompiledExpression,
  depth: number,
  numbers: NumberRendering,
  as?: DamlRendering,
): JsonValue {
  if (depth > MAX_DEPTH) {
    throw new RenderFailure(
      `the value nests deeper than ${MAX_DEPTH} levels`,
      expr.source,
      expr.pos,
    );
  }
  if (as !== undefined) {
    const typed = typedJson(value, as, {
      fail: (message) => {
        throw new RenderFailure(message, expr.source, expr.pos);
      },
      part: (v, rendering) => toJson(v, expr, depth + 1, numbers, rendering),
      same: (v, rendering) => toJson(v, expr, depth, numbers, rendering),
    });
    if (typed !== undefined) return typed;
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'bigint':
      return numbers === 'keep' && Number.isSafeInteger(Number(value))
        ? Number(value)
        : value.toString();
    case 'number': {
      const text = numberText(value);
      if (text !== null) return numbers === 'keep' ? value : text;
      throw new RenderFailure(
        `${value} is not a number a command can carry`,
        expr.source,
        expr.pos,
      );
    }
    case 'object': {
      if (value === null) return null;
      if (value instanceof CelDecimal) return value.toString();
      if (value instanceof Date) return value.toISOString();
      if (value instanceof Optional) {
        return value.hasValue() ? toJson(value.value(), expr, depth + 1, numbers) : null;
      }
      if (Array.isArray(value))
        return value.map((v: unknown) => toJson(v, expr, depth + 1, numbers));
      if (value instanceof Map) {
        const out: Record<string, JsonValue> = {};
        for (const [k, v] of value as Map<unknown, unknown>) {
          out[String(k)] = toJson(v, expr, depth + 1, numbers);
        }
        return out;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) {
        const out: Record<string, JsonValue> = {};
        for (const [k, v] of Object.entries(value)) out[k] = toJson(v, expr, depth + 1, numbers);
        return out;
      }
      const unsigned = unsignedValue(value);
      if (unsigned !== undefined) return toJson(unsigned, expr, depth, numbers);
      break;
    }
    default:
      break;
  }
  throw new RenderFailure(
    `the expression gives ${describe(value)}, which a command cannot carry: convert it with string(...) or pick a field`,
    expr.source,
    expr.pos,
  );
}

/** The text of a value spliced into a longer string. */
function toText(value: unknown, expr: CompiledExpression): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'number': {
      const text = numberText(value);
      if (text !== null) return text;
      break;
    }
    case 'object':
      if (value instanceof CelDecimal) return value.toString();
      if (value instanceof Date) return value.toISOString();
      if (value !== null && unsignedValue(value) !== undefined) return String(unsignedValue(value));
      break;
    default:
      break;
  }
  const what = value === null ? 'null' : Array.isArray(value) ? 'a list' : describe(value);
  throw new RenderFailure(
    `cannot put ${what} inside a text: make "\${{ }}" the whole value, or pick a field`,
    expr.source,
    expr.pos,
  );
}
