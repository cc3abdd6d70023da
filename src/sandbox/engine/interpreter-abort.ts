import type { EngineError } from './engine-error.js';

/** Thrown inside the interpreter only; turned into an EngineError result at its boundary. */
export class InterpreterAbort extends Error {
  constructor(readonly error: EngineError) {
    super(error.cause);
  }
}

/** Ends the interpretation with `error`: nothing of the transaction is kept. */
export const fail = (error: EngineError): never => {
  throw new InterpreterAbort(error);
};
