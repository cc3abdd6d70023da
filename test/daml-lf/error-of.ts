import { DamlLfError } from '../../src/daml-lf/daml-lf-error.js';

/** The DamlLfError `f` throws (any other outcome fails the test). */
export function errorOf(f: () => unknown): DamlLfError {
  try {
    f();
  } catch (err) {
    if (err instanceof DamlLfError) return err;
    throw err;
  }
  throw new Error('expected a DamlLfError, but nothing was thrown');
}

/** The DamlLfError `f`'s promise rejects with (any other outcome fails the test). */
export async function asyncErrorOf(f: () => Promise<unknown>): Promise<DamlLfError> {
  try {
    await f();
  } catch (err) {
    if (err instanceof DamlLfError) return err;
    throw err;
  }
  throw new Error('expected a DamlLfError, but the promise resolved');
}
