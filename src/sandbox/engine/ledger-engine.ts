import type { LedgerEngineOptions } from './engine-types.js';
import type { LedgerEngine as Port } from './engine-ports.js';
import { LedgerState } from './ledger-state.js';

/** The sandbox's in-memory ledger as the server sees it (see engine-ports.ts). */
export type LedgerEngine = Port;

/** Makes the engine; the value of the same name keeps `LedgerEngine.create(...)` for callers. */
export const LedgerEngine = {
  create(options: LedgerEngineOptions): LedgerEngine {
    return new LedgerState(options);
  },
};
