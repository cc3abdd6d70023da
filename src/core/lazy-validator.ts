import { Ajv, type Options, type ValidateFunction } from 'ajv';

/**
 * An ajv validator compiled at its first use, not at import. Compiling a schema costs tens of
 * milliseconds; the CLI imports every command's modules, and `ledgerbot run` must not pay for
 * the sandbox model or rule-test schemas it never uses (start-up is a benchmarked target).
 */
export function lazyValidator<T = unknown>(
  options: Options,
  schema: object,
): () => ValidateFunction<T> {
  let validate: ValidateFunction<T> | undefined;
  return () => (validate ??= new Ajv(options).compile<T>(schema));
}
