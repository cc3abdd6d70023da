import {
  formatSourceProblem,
  SourceProblemsError,
  type SourceProblemCode,
} from '../../core/source/index.js';

/** The front end's codes (YAML, size, schema) and the config's own. */
export type ConfigProblemCode =
  | SourceProblemCode
  | 'BAD_DURATION'
  | 'BAD_URL'
  | 'LEDGER_ENDPOINT'
  | 'BAD_START'
  | 'MISSING_ENV'
  | 'BAD_ENV_SYNTAX'
  | 'DUPLICATE_ALIAS'
  | 'BAD_PACKAGE_PATH'
  | 'FLEET_NEEDS_POSTGRES'
  | 'BAD_LEASE_PERIOD';

/** One mistake in a config file; positions are 1-based, `path` is the field (e.g. `ledger.url`). */
export type ConfigProblem = {
  readonly code: ConfigProblemCode;
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly path: string;
  readonly message: string;
  readonly hint?: string;
};

/** `file:line:col: message` and a hint line, like every source problem. */
export const formatConfigProblem: (p: ConfigProblem) => string = formatSourceProblem;

/**
 * An invalid `bot.config.yaml`. `file`, `line` and `col` are those of the first problem; all of
 * them are in `problems` and in the message. The CLI exits with code 2. Messages never contain
 * secrets: neither secret fields nor values that came from the environment are echoed.
 */
export class ConfigError extends SourceProblemsError<ConfigProblem> {
  constructor(
    problems: readonly [ConfigProblem, ...ConfigProblem[]],
    options?: { cause?: unknown },
  ) {
    const first = problems[0];
    super(
      'INVALID_CONFIG',
      problems,
      problems.length === 1
        ? formatConfigProblem(first)
        : [
            `${problems.length} problems in ${first.file}; fix them and start again:`,
            ...problems.map(formatConfigProblem),
          ].join('\n'),
      options,
    );
  }
}
