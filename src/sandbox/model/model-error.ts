import { LedgerbotError } from '../../core/ledgerbot-error.js';
import type { SourcePos } from './model-types.js';

/** One mistake in a model file, at 1-based line and column. */
export type ModelProblem = SourcePos & {
  /** What is wrong and what to write instead, without the position. */
  readonly problem: string;
};

export function formatModelProblem(p: ModelProblem): string {
  return `${p.file}:${p.line}:${p.col}: ${p.problem}`;
}

/**
 * A model file that cannot be loaded, with every problem found: one `file:line:col: problem`
 * line each, the first one first. `file`, `line`, `col` and `problem` are those of the first.
 */
export class ModelError extends LedgerbotError {
  readonly problems: readonly ModelProblem[];
  readonly file: string;
  readonly line: number;
  readonly col: number;
  /** The first problem without the position prefix. */
  readonly problem: string;

  constructor(problems: readonly [ModelProblem, ...ModelProblem[]], options?: { cause?: unknown }) {
    super('INVALID_MODEL', problems.map(formatModelProblem).join('\n'), options);
    const first = problems[0];
    this.problems = problems;
    this.file = first.file;
    this.line = first.line;
    this.col = first.col;
    this.problem = first.problem;
  }
}

/** Collects the problems of one model file; `throwIfAny` ends a phase that found some. */
export class ModelProblems {
  readonly #list: ModelProblem[] = [];
  #cause: unknown;

  add(pos: SourcePos, problem: string, cause?: unknown): void {
    this.#list.push({ file: pos.file, line: pos.line, col: pos.col, problem });
    this.#cause ??= cause;
  }

  get size(): number {
    return this.#list.length;
  }

  throwIfAny(): void {
    const [first, ...rest] = this.#list;
    if (first === undefined) return;
    throw new ModelError([first, ...rest], this.#cause === undefined ? {} : { cause: this.#cause });
  }
}
