import type {
  Completion,
  EventFormat,
  JsCommands,
  JsGetActiveContractsResponse,
  JsGetEventsByContractIdResponse,
  JsTransaction,
  PartyDetails,
  Right,
  TransactionFormat,
  User,
} from '../../ledger/wire/wire-types.js';
import type { PackageModel } from '../model/model-types.js';
import type { CommittedTransaction } from './committed-transaction.js';
import type { EngineError } from './engine-error.js';
import type {
  ActiveContractsCursor,
  ActiveContractsPage,
  CompletionInput,
  LogEntry,
  LogListener,
  PendingTransaction,
  Result,
  SubmitContext,
  SubmitOutcome,
} from './engine-types.js';
import type { ResolvedId } from './template-resolver.js';

/** Party and user management (the admin routes, and the sandbox's own set-up). */
export interface PartyAdmin {
  /** The loaded packages, in load order. */
  readonly packages: readonly PackageModel[];
  /**
   * Allocates `<hint>::<namespace>`. A hint already allocated → INVALID_ARGUMENT; a hint that is not
   * a valid party id hint → INVALID_ARGUMENT. With `userId`, that user gets CanActAs on the party.
   */
  allocateParty(hint: string, options?: { readonly userId?: string }): Result<PartyDetails>;
  /** All allocated parties, sorted by party id. */
  parties(): readonly PartyDetails[];
  party(partyId: string): PartyDetails | undefined;
  /** USER_ALREADY_EXISTS (10) if the id is taken; INVALID_ARGUMENT for a bad id. */
  createUser(user: User, rights: readonly Right[]): Result<User>;
  user(userId: string): User | undefined;
  /** Sorted by id. */
  users(): readonly User[];
  /** USER_NOT_FOUND (11) if missing. */
  deleteUser(userId: string): Result<null>;
  /** USER_NOT_FOUND (11) if missing. */
  userRights(userId: string): Result<readonly Right[]>;
  /** Returns the rights that were newly granted. */
  grantUserRights(userId: string, rights: readonly Right[]): Result<readonly Right[]>;
  /** Returns the rights that were actually revoked. */
  revokeUserRights(userId: string, rights: readonly Right[]): Result<readonly Right[]>;
}

/** Commands: interpretation, commit and completions (the command pipeline and transcoder). */
export interface CommandPort {
  /**
   * Interprets and, on success, commits the commands as one transaction at the next offset (all or
   * nothing). Checks template ids, argument types, authorization, visibility and activeness.
   * Does NOT record a completion: call `recordCompletion` when the server decides to emit one.
   */
  submit(commands: JsCommands, context: SubmitContext): SubmitOutcome;
  /**
   * `submit` in two steps, for a caller that decides between them whether to commit (the
   * deduplicator): interpretation changes nothing; `commit` must follow at once.
   */
  interpret(commands: JsCommands, context: SubmitContext): Result<PendingTransaction>;
  commit(pending: PendingTransaction): CommittedTransaction;
  /** Appends a completion to the log (see CompletionInput for its offset) and notifies listeners. */
  recordCompletion(input: CompletionInput): Completion;
  /** A template or interface by id (package-id or `#package-name` form), for the JSON layer. */
  resolveTemplate(templateId: string): ResolvedId | EngineError;
}

/** Reading the log and projecting it for a party's view (the read routes and the streams). */
export interface LedgerReader {
  readonly participantId: string;
  readonly synchronizerId: string;
  /** The offset of the last log entry; 0 for an empty ledger. */
  ledgerEnd(): number;
  /** Everything at or below this offset has been pruned; 0 if never pruned. */
  prunedUpToInclusive(): number;
  /**
   * Prunes up to `offset` inclusive: transactions, completions and archived contracts at or below
   * it are dropped. OFFSET_AFTER_LEDGER_END (12) if beyond the ledger end; INVALID_ARGUMENT if not
   * positive.
   */
  prune(offset: number): Result<null>;
  /**
   * Checks a read's offsets: PARTICIPANT_PRUNED_DATA_ACCESSED (9) below the pruning offset,
   * OFFSET_AFTER_LEDGER_END (12) above the ledger end. Returns null when fine.
   */
  checkOffset(offset: number, field: string): EngineError | null;
  /**
   * Committed transactions with beginExclusive < offset <= endInclusive: at most `limit` of them,
   * the first ones ascending, or with `descending` the last ones, latest first.
   */
  transactionsBetween(
    beginExclusive: number,
    endInclusive: number,
    limit?: number,
    descending?: boolean,
  ): readonly CommittedTransaction[];
  /**
   * Log entries (transactions and completions) with beginExclusive < offset <= endInclusive,
   * ascending; at most `limit` of them (the first ones).
   */
  entriesBetween(beginExclusive: number, endInclusive: number, limit?: number): readonly LogEntry[];
  transactionByOffset(offset: number): CommittedTransaction | undefined;
  transactionById(updateId: string): CommittedTransaction | undefined;
  /** Called synchronously after every appended log entry; returns an unsubscribe function. */
  subscribe(listener: LogListener): () => void;
  /**
   * TEMPLATES_OR_INTERFACES_NOT_FOUND / PACKAGE_NAMES_NOT_FOUND (11) for filters naming unknown
   * templates or interfaces, INVALID_ARGUMENT for malformed ids; null when fine.
   */
  validateEventFormat(format: EventFormat): EngineError | null;
  /**
   * The wire transaction as the given format shows it, or null when none of its events is
   * visible (the server then skips the transaction). Assumes a validated format.
   */
  projectTransaction(
    transaction: CommittedTransaction,
    format: TransactionFormat,
  ): JsTransaction | null;
  /** The active contracts at `offset` visible through `format`, ordered by creation offset. */
  activeContractsAt(offset: number, format: EventFormat): readonly JsGetActiveContractsResponse[];
  /**
   * At most `limit` of `activeContractsAt(offset, format)`, starting after `after` (the `next` of
   * the previous page). Walks the contracts from there, so that a page costs what it holds (plus
   * the contracts it skips), not the whole snapshot.
   */
  activeContractsPage(
    offset: number,
    format: EventFormat,
    after: ActiveContractsCursor | undefined,
    limit: number,
  ): ActiveContractsPage;
  /**
   * The create (and archive, if any) of a contract as `format`'s parties see it; null when the
   * contract is unknown or none of them is a stakeholder (the server answers CONTRACT_EVENTS_NOT_FOUND).
   */
  eventsByContractId(
    contractId: string,
    format: EventFormat,
  ): JsGetEventsByContractIdResponse | null;
}

/**
 * The sandbox's in-memory ledger as the server sees it: parties, users, packages, the active
 * contract set and the ordered log of transactions and completions. Synchronous and
 * deterministic given its Random and Clock. It speaks wire types (JsCommands in, JsTransaction
 * and friends out) but does no I/O; the HTTP/websocket server sits on top of it. A server module
 * that needs one side of it takes `PartyAdmin`, `CommandPort` or `LedgerReader`.
 *
 * Errors are returned as data (`EngineError`), never thrown, so the server can put them in HTTP
 * bodies or completions. A failed submission changes nothing.
 *
 * Not done here (the server's job): authentication and user-right checks, command deduplication
 * and in-flight tracking, fault injection, list limits.
 *
 * `LedgerState` implements it; what the interpreter needs besides (`InterpreterLedger`) stays off
 * this port.
 */
export interface LedgerEngine extends PartyAdmin, CommandPort, LedgerReader {}
