import { IllegalStateError } from '../../core/illegal-state-error.js';
import {
  formatSourceProblem,
  SourceProblemsError,
  type SourceProblem,
} from '../../core/source/index.js';
import type { SourcePos } from './model-types.js';

/** One mistake in a model file, at 1-based line and column. */
export type ModelProblem = SourcePos & {
  /** What is wrong, without the position. */
  readonly problem: string;
  /** What to write instead, when that is not already in `problem`. */
  readonly hint?: string;
};

function formatModelProblem(p: ModelProblem): string {
  return formatSourceProblem({ ...p, message: p.problem });
}

/**
 * A model file that cannot be loaded, with every problem found: one `file:line:col: problem`
 * line each (and a hint line where there is one), the first one first. `file`, `line`, `col` and `problem` are those of the first.
 */
export class ModelError extends SourceProblemsError<ModelProblem> {
  /** The first problem without the position prefix. */
  readonly problem: string;

  constructor(problems: readonly [ModelProblem, ...ModelProblem[]], options?: { cause?: unknown }) {
    super('INVALID_MODEL', problems, problems.map(formatModelProblem).join('\n'), options);
    this.problem = problems[0].problem;
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

  /** Problems of the shared front end (YAML, schema), already placed. */
  addAll(found: readonly SourceProblem<string>[]): void {
    for (const p of found) {
      this.#list.push({
        file: p.file,
        line: p.line,
        col: p.col,
        problem: p.message,
        ...(p.hint === undefined ? {} : { hint: p.hint }),
      });
    }
  }

  get size(): number {
    return this.#list.length;
  }

  /** Throws ModelError with every problem so far; for a phase that found one. */
  fail(): never {
    this.throwIfAny();
    throw new IllegalStateError('a model phase failed without a problem');
  }

  throwIfAny(): void {
    const [first, ...rest] = this.#list;
    if (first === undefined) return;
    throw new ModelError([first, ...rest], this.#cause === undefined ? {} : { cause: this.#cause });
  }
}
