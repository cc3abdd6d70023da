import { createRequire } from 'node:module';
import type { Ajv as AjvClass, Options, ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

/**
 * An ajv validator compiled at its first use, not at import. Compiling a schema costs tens of
 * milliseconds, and so does loading ajv's compiler: it is required only here, when a schema
 * without generated code (scripts/gen-validators.ts) is first used. `ledgerbot run` pays for
 * neither (start-up is a benchmarked target).
 */
export function lazyValidator<T = unknown>(
  options: Options,
  schema: object,
): () => ValidateFunction<T> {
  let validate: ValidateFunction<T> | undefined;
  return () => {
    if (validate === undefined) {
      const { Ajv } = require('ajv') as { Ajv: typeof AjvClass };
      validate = new Ajv(options).compile<T>(schema);
    }
    return validate;
  };
}
