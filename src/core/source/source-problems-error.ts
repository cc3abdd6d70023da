import { LedgerbotError } from '../ledgerbot-error.js';

/**
 * A source file that cannot be loaded, with every problem found in it; `file`, `line` and `col`
 * are those of the first problem. Each loader (config, model) words its own message.
 */
export class SourceProblemsError<
  P extends { readonly file: string; readonly line: number; readonly col: number },
  Code extends string = string,
> extends LedgerbotError<Code> {
  readonly problems: readonly P[];
  readonly file: string;
  readonly line: number;
  readonly col: number;

  constructor(
    code: Code,
    problems: readonly [P, ...P[]],
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    const first = problems[0];
    this.problems = problems;
    this.file = first.file;
    this.line = first.line;
    this.col = first.col;
  }
}
