import type { LedgerEngineOptions } from './engine-types.js';
import type { LedgerEngine as Port } from './engine-ports.js';
import { LedgerState } from './ledger-state.js';

export type {
  ActiveContractsCursor,
  ActiveContractsPage,
  CompletionInput,
  LedgerEngineOptions,
  LogEntry,
  LogListener,
  PendingTransaction,
  Result,
  SubmitContext,
  SubmitOutcome,
} from './engine-types.js';
export type { CommandPort, LedgerReader, PartyAdmin } from './engine-ports.js';

/** The sandbox's in-memory ledger as the server sees it (see engine-ports.ts). */
export type LedgerEngine = Port;

/** Makes the engine; the value of the same name keeps `LedgerEngine.create(...)` for callers. */
export const LedgerEngine = {
  create(options: LedgerEngineOptions): LedgerEngine {
    return new LedgerState(options);
  },
};
