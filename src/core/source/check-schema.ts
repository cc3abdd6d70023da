import type { Options, ValidateFunction } from 'ajv';
import { ajvInstancePath } from '../ajv-instance-path.js';
import { lazyValidator } from '../lazy-validator.js';
import type { YamlLocator, YamlPath } from '../yaml-locator.js';
import { explainSchemaErrors, type SchemaWording } from './explain-schema-errors.js';
import type { SourceProblem, SourceProblemCode } from './source-problem.js';

export type SchemaCheck<C extends string = SourceProblemCode> = {
  readonly valid: boolean;
  /** Every problem, explained and placed; none when valid. */
  readonly problems: readonly SourceProblem<C | SourceProblemCode>[];
  /** Every instance path ajv complained about, also those whose errors were not shown. */
  readonly errorPaths: readonly YamlPath[];
};

export type SchemaCheckOptions<C extends string> = SchemaWording<C> & {
  /** ajv options over the front end's (allErrors, verbose, strict: false), e.g. useDefaults. */
  readonly ajv?: Options;
  /**
   * The schema compiled ahead of time with these options (scripts/gen-validators.ts): used
   * instead of compiling it at first use.
   */
  readonly compiled?: ValidateFunction;
};

/** The options every checker compiles its schema with (before its own `ajv`). */
export const SCHEMA_CHECK_AJV_OPTIONS = { allErrors: true, verbose: true, strict: false } as const;

/**
 * A checker of data against one JSON Schema, compiled at its first use (or ahead of time:
 * `compiled`). The data is usually
 * the parsed source's value (ajv may fill in defaults: `ajv: { useDefaults: true }`); the
 * locator places each problem at file:line:col. `perCall` adds wording that depends on the one
 * file checked (the config describes values that came from the environment differently).
 */
export function schemaChecker<C extends string = SourceProblemCode>(
  schema: object,
  options: SchemaCheckOptions<C> = {},
): (data: unknown, at: YamlLocator, perCall?: SchemaWording<C>) => SchemaCheck<C> {
  const { ajv, compiled, ...shared } = options;
  const validator =
    compiled === undefined
      ? lazyValidator({ ...SCHEMA_CHECK_AJV_OPTIONS, ...ajv }, schema)
      : () => compiled;
  return (data, at, perCall) => {
    const validate = validator();
    if (validate(data)) return { valid: true, problems: [], errorPaths: [] };
    const errors = validate.errors ?? [];
    const wording = perCall === undefined ? shared : { ...shared, ...perCall };
    const problems = explainSchemaErrors(errors, wording).map((p) => ({
      ...at.pos(p.path, { key: p.key }),
      path: p.path,
      code: p.code,
      message: p.message,
      ...(p.hint === undefined ? {} : { hint: p.hint }),
    }));
    return { valid: false, problems, errorPaths: errors.map(ajvInstancePath) };
  };
}
