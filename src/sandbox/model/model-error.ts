import { LedgerbotError } from '../../core/ledgerbot-error.js';
import type { SourcePos } from './model-types.js';

/** A model file that cannot be loaded. The message starts with file:line:col and says what to fix. */
export class ModelError extends LedgerbotError {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  /** The problem without the position prefix. */
  readonly problem: string;

  constructor(pos: SourcePos, problem: string, options?: { cause?: unknown }) {
    super('INVALID_MODEL', `${pos.file}:${pos.line}:${pos.col}: ${problem}`, options);
    this.file = pos.file;
    this.line = pos.line;
    this.col = pos.col;
    this.problem = problem;
  }
}
