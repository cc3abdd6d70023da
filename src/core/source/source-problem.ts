import type { YamlPath } from '../yaml-locator.js';

/** The codes the front end itself produces; loaders add their own (e.g. BAD_DURATION). */
export type SourceProblemCode =
  | 'FILE_TOO_LARGE'
  | 'YAML_TOO_COMPLEX'
  | 'YAML_SYNTAX'
  | 'UNKNOWN_KEY'
  | 'MISSING_KEY'
  | 'WRONG_TYPE'
  | 'BAD_VALUE'
  | 'SCHEMA';

/**
 * One problem in a source file, at 1-based line and column. `path` is the field it is about
 * (empty for the file as a whole); `hint`, when there is one, says what to write instead.
 */
export type SourceProblem<C extends string = SourceProblemCode> = {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly path: YamlPath;
  readonly code: C;
  readonly message: string;
  readonly hint?: string;
};

/** `file:line:col: message` (and an indented hint line), the form editors and CI understand. */
export function formatSourceProblem(
  problem: Pick<SourceProblem<string>, 'file' | 'line' | 'col' | 'message' | 'hint'>,
): string {
  const head = `${problem.file}:${problem.line}:${problem.col}: ${problem.message}`;
  return problem.hint === undefined ? head : `${head}\n    hint: ${problem.hint}`;
}
