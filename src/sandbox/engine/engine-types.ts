import type { Clock } from '../../core/clock.js';
import type { Random } from '../../core/random.js';
import type {
  Completion,
  JsCommands,
  JsGetActiveContractsResponse,
} from '../../ledger/wire/wire-types.js';
import type { PackageModel } from '../model/model-types.js';
import type { Interpreted } from './command-interpreter.js';
import type { CommittedTransaction } from './committed-transaction.js';
import type { EngineError } from './engine-error.js';

// The engine's option and result types, apart from its ports and its implementation, which both
// use them.
export type LedgerEngineOptions = {
  readonly models: readonly PackageModel[];
  /** `<name>::<namespace>`, e.g. `sandbox::1220…`; parties get the same namespace. */
  readonly participantId: string;
  /** Default `sandbox::<namespace of participantId>`. */
  readonly synchronizerId?: string;
  /** Source of contract ids and update ids; a SeededRandom makes a run reproducible. */
  readonly random: Random;
  /** Ledger time: effectiveAt, recordTime and createdAt come from it. */
  readonly clock: Clock;
};

/** Who submits: the resolved user and the parties of the commands. */
export type SubmitContext = {
  /** The user of the submission (the token's user or `commands.userId`). */
  readonly userId: string;
};

/**
 * An interpreted submission, not yet committed: `commit` it right away (before anything else
 * changes the ledger) or drop it. Lets the server deduplicate after interpretation, as Canton does.
 */
export type PendingTransaction = {
  readonly offset: number;
  readonly effectiveAt: string;
  readonly commands: JsCommands;
  readonly context: SubmitContext;
  readonly interpreted: Interpreted;
};

export type SubmitOutcome =
  | { readonly ok: true; readonly transaction: CommittedTransaction }
  | { readonly ok: false; readonly error: EngineError };

export type Result<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: EngineError };

/** What `recordCompletion` needs; the engine fills in `offset` and `synchronizerTime`. */
export type CompletionInput = Omit<Completion, 'offset' | 'synchronizerTime'> & {
  /**
   * For a successful completion: the transaction it completes. The completion then shares that
   * transaction's offset, as on Canton. A rejection (no transaction) gets an offset of its own.
   */
  readonly transaction?: CommittedTransaction;
  /**
   * Fault injection: the completion is in the log (reads from an earlier offset and the list
   * endpoint find it, as Canton's index would) but never reached the streams open at the time.
   */
  readonly lostInTransit?: boolean;
};

/** One element of the ledger's log, in offset order. */
export type LogEntry =
  | {
      readonly kind: 'transaction';
      readonly offset: number;
      readonly transaction: CommittedTransaction;
    }
  | {
      readonly kind: 'completion';
      readonly offset: number;
      readonly completion: Completion;
      /** See CompletionInput.lostInTransit: live streams skip it. */
      readonly lostInTransit?: true;
    };

export type LogListener = (entry: LogEntry) => void;

/** Where a page of the active contract set ended: the creation offset and node id of its last contract. */
export type ActiveContractsCursor = { readonly offset: number; readonly nodeId: number };

export type ActiveContractsPage = {
  readonly activeContracts: readonly JsGetActiveContractsResponse[];
  /** Set when more contracts follow: pass it as `after` for the next page. */
  readonly next: ActiveContractsCursor | undefined;
};
