import { LedgerbotError } from '../../core/ledgerbot-error.js';

/**
 * A CEL expression that does not parse or type-check. `offset` is 0-based in the expression text,
 * `line`/`col` are 1-based within it, so callers can translate them to file:line:col.
 */
export class CelCompileError extends LedgerbotError {
  readonly expression: string;
  readonly offset: number;
  readonly line: number;
  readonly col: number;
  /** One line saying what is wrong, without the source excerpt. */
  readonly summary: string;

  constructor(expression: string, offset: number, summary: string, options?: { cause?: unknown }) {
    const before = expression.slice(0, offset).split('\n');
    const line = before.length;
    const col = (before[before.length - 1]?.length ?? 0) + 1;
    super('CEL_COMPILE_ERROR', `${summary} (at ${line}:${col} of "${expression}")`, options);
    this.expression = expression;
    this.offset = offset;
    this.line = line;
    this.col = col;
    this.summary = summary;
  }
}
