/**
 * The front end for YAML + JSON Schema files (rules, rule tests, the bot config, sandbox
 * models): one way to parse, guard, validate and report, so every loader has the same limits
 * and reports every problem at file:line:col, not only the first.
 *
 * Two steps, so a loader can work on the data in between (the config interpolates `${VAR}`):
 *
 *   const parsed = parseYamlSource(path, text, { noun: 'config file', limits: { maxBytes } });
 *   if (!parsed.ok) return fail(parsed.problems);          // size, nesting, aliases, syntax
 *   const { value, at } = parsed.source;
 *   const check = checkConfig(value, at);                  // checkConfig = schemaChecker(SCHEMA, {...})
 *   if (!check.valid) return fail(check.problems);
 *
 * - `parseYamlSource(file, text, { noun, limits?, tooLargeAdvice? })`: refuses text over the
 *   limits (SourceLimits: bytes, flow depth, raw bracket depth, indentation, aliases) before the
 *   parser sees it, then parses with positions; every YAML syntax error becomes a problem with a
 *   hint where one is likely. Messages name the file by `noun` ("rule files do not nest that
 *   deep") and never show source text.
 * - `schemaChecker(schema, options)` compiles the schema at first use (ajv, allErrors, verbose;
 *   `options.ajv` adds e.g. useDefaults), or takes `options.compiled`, the same compiled ahead of
 *   time (scripts/gen-validators.ts), and returns `(data, at, perCall?) => SchemaCheck`
 *   (`perCall`: wording for this one file only): `problems` explained in words (did-you-mean
 *   for unknown keys and enum values, type words, "has no `x`") and placed by the locator, plus
 *   `errorPaths`. The rest of `options` is SchemaWording: `secret(path)` (values never shown),
 *   `field`/`place`/`value` (how things are named), `badName` (what a key refused by
 *   `propertyNames` is not), `missingHints`, `patterns` (what a pattern means), and
 *   `explain(error, path)` for the loader's own words (return null to drop an error, undefined
 *   for the default). Errors inside a oneOf/anyOf branch are passed over when the combinator
 *   failed as a whole (its own error is explained: "none of the forms", or with `alternatives:
 *   'most-telling'` the error inside them that best says what is wrong), and kept when ajv's
 *   discriminator picked the branch.
 * - Problems are `SourceProblem<Code>`: file, line, col, path, code, message, hint?.
 *   `formatSourceProblem` renders `file:line:col: message` and an indented hint line;
 *   `SourceProblemsError` is the base of a loader's error that carries them all.
 * - `closestMatch(word, candidates)` for a loader's own did-you-mean hints, and
 *   `unknownKeyProblem(error, path, message, didYouMean)` for an `explain` that words unknown
 *   keys its own way (the closest key, else the keys allowed there).
 */
export { closestMatch, editDistance } from './closest-match.js';
export { schemaChecker, type SchemaCheck, type SchemaCheckOptions } from './check-schema.js';
export {
  describeValue,
  dottedPath,
  explainSchemaErrors,
  unknownKeyProblem,
  type SchemaProblem,
  type SchemaWording,
} from './explain-schema-errors.js';
export { guardText, textPos, type TextGuardProblem } from './guard-text.js';
export {
  parseYamlSource,
  type ParsedYamlSource,
  type ParseYamlSourceOptions,
  type YamlSource,
} from './parse-yaml-source.js';
export { DEFAULT_SOURCE_LIMITS, type SourceLimits } from './source-limits.js';
export { SourceProblemsError } from './source-problems-error.js';
export {
  formatSourceProblem,
  type SourceProblem,
  type SourceProblemCode,
} from './source-problem.js';
export type { YamlPath, YamlPos } from '../yaml-locator.js';
export { YamlLocator } from '../yaml-locator.js';
