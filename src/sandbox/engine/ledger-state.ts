// Work in progress: the implementation follows; the signatures are final.
/* eslint-disable @typescript-eslint/no-unused-vars */
import { IllegalStateError } from '../../core/illegal-state-error.js';
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
  CompletionInput,
  LedgerEngineOptions,
  LogEntry,
  LogListener,
  Result,
  SubmitContext,
  SubmitOutcome,
} from './ledger-engine.js';

const todo = (): never => {
  throw new IllegalStateError('not implemented yet');
};

export class LedgerState {
  readonly participantId: string;
  readonly synchronizerId: string;
  readonly packages: readonly PackageModel[];
  ledgerEnd = 0;
  prunedUpTo = 0;

  constructor(options: LedgerEngineOptions) {
    this.participantId = options.participantId;
    this.synchronizerId =
      options.synchronizerId ?? 'sandbox::' + (options.participantId.split('::')[1] ?? '');
    this.packages = options.models;
  }

  allocateParty(_hint: string, _userId: string | undefined): Result<PartyDetails> {
    return todo();
  }
  listParties(): readonly PartyDetails[] {
    return todo();
  }
  getParty(_id: string): PartyDetails | undefined {
    return todo();
  }
  createUser(_user: User, _rights: readonly Right[]): Result<User> {
    return todo();
  }
  getUser(_id: string): User | undefined {
    return todo();
  }
  listUsers(): readonly User[] {
    return todo();
  }
  deleteUser(_id: string): Result<null> {
    return todo();
  }
  userRights(_id: string): Result<readonly Right[]> {
    return todo();
  }
  grantUserRights(_id: string, _rights: readonly Right[]): Result<readonly Right[]> {
    return todo();
  }
  revokeUserRights(_id: string, _rights: readonly Right[]): Result<readonly Right[]> {
    return todo();
  }
  submit(_commands: JsCommands, _context: SubmitContext): SubmitOutcome {
    return todo();
  }
  recordCompletion(_input: CompletionInput): Completion {
    return todo();
  }
  prune(_offset: number): Result<null> {
    return todo();
  }
  checkOffset(_offset: number, _field: string): EngineError | null {
    return todo();
  }
  transactionsBetween(_b: number, _e: number): readonly CommittedTransaction[] {
    return todo();
  }
  entriesBetween(_b: number, _e: number): readonly LogEntry[] {
    return todo();
  }
  transactionByOffset(_o: number): CommittedTransaction | undefined {
    return todo();
  }
  transactionById(_id: string): CommittedTransaction | undefined {
    return todo();
  }
  subscribe(_l: LogListener): () => void {
    return todo();
  }
  validateEventFormat(_f: EventFormat): EngineError | null {
    return todo();
  }
  projectTransaction(_t: CommittedTransaction, _f: TransactionFormat): JsTransaction | null {
    return todo();
  }
  activeContractsAt(_o: number, _f: EventFormat): readonly JsGetActiveContractsResponse[] {
    return todo();
  }
  eventsByContractId(_c: string, _f: EventFormat): JsGetEventsByContractIdResponse | null {
    return todo();
  }
}
