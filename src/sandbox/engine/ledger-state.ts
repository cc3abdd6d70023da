import type { Clock } from '../../core/clock.js';
import type { Random } from '../../core/random.js';
import { sha256Hex } from '../../core/sha256-hex.js';
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
import { IllegalStateError } from '../../core/illegal-state-error.js';
import type { PackageModel, TemplateDef } from '../model/model-types.js';
import { formatTimestamp } from '../model/normalize-daml-value.js';
import { CommandInterpreter, type InterpreterLedger } from './command-interpreter.js';
import type {
  CommittedTransaction,
  ContractRecord,
  ExerciseNode,
} from './committed-transaction.js';
import { engineError, type EngineError } from './engine-error.js';
import { EventFilter } from './event-filter.js';
import type {
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
import { createdEvent, projectTransaction } from './project-transaction.js';
import { TemplateResolver } from './template-resolver.js';

const PARTY_HINT = /^[A-Za-z0-9:_\- ]{1,185}$/;
const USER_ID = /^[A-Za-z0-9@^$.!`\-#+'~_|:()]{1,128}$/;

type ContractMeta = {
  readonly record: ContractRecord;
  archivedOffset: number | null;
  archive: { readonly tx: CommittedTransaction; readonly node: ExerciseNode } | null;
};

const rightKey = (r: Right): string => JSON.stringify(r.kind);

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const err = <T>(error: EngineError): Result<T> => ({ ok: false, error });

/** The engine's state and its operations; see LedgerEngine for the contract of each method. */
export class LedgerState implements InterpreterLedger {
  readonly participantId: string;
  readonly synchronizerId: string;
  readonly packages: readonly PackageModel[];
  ledgerEnd = 0;
  prunedUpTo = 0;

  readonly #namespace: string;
  readonly #clock: Clock;
  readonly #resolver: TemplateResolver;
  readonly #idSeed: string;
  #idCounter = 0;

  readonly #parties = new Map<string, PartyDetails>();
  readonly #users = new Map<string, { user: User; rights: Right[] }>();
  readonly #contracts = new Map<string, ContractMeta>();
  /**
   * The values of #contracts in (creation offset, node id) order, the order of the active contract
   * set, so that a page of it can start where the previous one ended instead of at the beginning.
   */
  #byCreation: ContractMeta[] = [];
  readonly #active = new Set<string>();
  readonly #keys = new Map<string, string>();
  /** In offset order; pruning drops a prefix. */
  #log: LogEntry[] = [];
  readonly #byOffset = new Map<number, CommittedTransaction>();
  readonly #byUpdateId = new Map<string, CommittedTransaction>();
  readonly #listeners = new Set<LogListener>();

  constructor(options: LedgerEngineOptions) {
    this.participantId = options.participantId;
    this.#namespace = options.participantId.split('::')[1] ?? sha256Hex(options.participantId);
    this.synchronizerId = options.synchronizerId ?? `sandbox::${this.#namespace}`;
    this.packages = options.models;
    this.#clock = options.clock;
    this.#resolver = new TemplateResolver(options.models);
    this.#idSeed = randomHex(options.random);
  }

  // ---- ids -------------------------------------------------------------------------------------

  nextContractId(): string {
    return `00${sha256Hex(`c:${this.#idSeed}:${this.#idCounter++}`)}`;
  }

  #nextUpdateId(): string {
    return `1220${sha256Hex(`u:${this.#idSeed}:${this.#idCounter++}`)}`;
  }

  // ---- parties and users -----------------------------------------------------------------------

  allocateParty(hint: string, userId: string | undefined): Result<PartyDetails> {
    if (!PARTY_HINT.test(hint) || hint.includes('::')) {
      return err(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: Party id hint "${hint}" is not a valid party id hint`,
        ),
      );
    }
    if (userId !== undefined && userId !== '' && !this.#users.has(userId)) {
      return err(
        engineError('USER_NOT_FOUND', 11, `getting user failed for unknown user "${userId}"`, {
          resources: [['USER', userId]],
        }),
      );
    }
    const party = `${hint}::${this.#namespace}`;
    if (this.#parties.has(party)) {
      return err(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: Party already exists: party ${party} is already allocated on this node`,
        ),
      );
    }
    const details: PartyDetails = {
      party,
      isLocal: true,
      localMetadata: { resourceVersion: '0', annotations: {} },
      identityProviderId: '',
    };
    this.#parties.set(party, details);
    if (userId !== undefined && userId !== '') {
      this.grantUserRights(userId, [{ kind: { CanActAs: { value: { party } } } }]);
    }
    return ok(details);
  }

  listParties(): readonly PartyDetails[] {
    return [...this.#parties.values()].sort((a, b) => (a.party < b.party ? -1 : 1));
  }

  getParty(id: string): PartyDetails | undefined {
    return this.#parties.get(id);
  }

  isKnownParty(party: string): boolean {
    return this.#parties.has(party);
  }

  createUser(user: User, rights: readonly Right[]): Result<User> {
    if (!USER_ID.test(user.id)) {
      return err(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: invalid user id "${user.id}"`,
        ),
      );
    }
    if (this.#users.has(user.id)) {
      return err(
        engineError(
          'USER_ALREADY_EXISTS',
          10,
          `creating user failed, as user "${user.id}" already exists`,
          { resources: [['USER', user.id]] },
        ),
      );
    }
    const stored: User = {
      id: user.id,
      primaryParty: user.primaryParty ?? '',
      isDeactivated: user.isDeactivated ?? false,
      metadata: { resourceVersion: '0', annotations: user.metadata?.annotations ?? {} },
      identityProviderId: user.identityProviderId ?? '',
    };
    this.#users.set(user.id, { user: stored, rights: dedupeRights(rights) });
    return ok(stored);
  }

  getUser(id: string): User | undefined {
    return this.#users.get(id)?.user;
  }

  listUsers(): readonly User[] {
    return [...this.#users.values()].map((u) => u.user).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  #userNotFound(id: string): EngineError {
    return engineError('USER_NOT_FOUND', 11, `getting user failed for unknown user "${id}"`, {
      resources: [['USER', id]],
    });
  }

  deleteUser(id: string): Result<null> {
    if (!this.#users.delete(id)) return err(this.#userNotFound(id));
    return ok(null);
  }

  userRights(id: string): Result<readonly Right[]> {
    const u = this.#users.get(id);
    return u === undefined ? err(this.#userNotFound(id)) : ok([...u.rights]);
  }

  grantUserRights(id: string, rights: readonly Right[]): Result<readonly Right[]> {
    const u = this.#users.get(id);
    if (u === undefined) return err(this.#userNotFound(id));
    const have = new Set(u.rights.map(rightKey));
    const added = dedupeRights(rights).filter((r) => !have.has(rightKey(r)));
    u.rights.push(...added);
    return ok(added);
  }

  revokeUserRights(id: string, rights: readonly Right[]): Result<readonly Right[]> {
    const u = this.#users.get(id);
    if (u === undefined) return err(this.#userNotFound(id));
    const drop = new Set(rights.map(rightKey));
    const removed = u.rights.filter((r) => drop.has(rightKey(r)));
    u.rights = u.rights.filter((r) => !drop.has(rightKey(r)));
    return ok(removed);
  }

  // ---- contracts (InterpreterLedger) -----------------------------------------------------------

  resolveTemplate(id: string): ReturnType<TemplateResolver['resolve']> {
    return this.#resolver.resolve(id);
  }

  /** The template of a contract, active or not; undefined when unknown (or pruned). */
  contractTemplate(contractId: string): TemplateDef | undefined {
    return this.#contracts.get(contractId)?.record.template;
  }

  activeContract(contractId: string): ContractRecord | undefined {
    return this.#active.has(contractId) ? this.#contracts.get(contractId)?.record : undefined;
  }

  activeContractByKey(template: TemplateDef, keyText: string): string | undefined {
    return this.#keys.get(`${template.templateId}\u0000${keyText}`);
  }

  // ---- commands --------------------------------------------------------------------------------

  submit(commands: JsCommands, context: SubmitContext): SubmitOutcome {
    const r = this.interpret(commands, context);
    return r.ok ? { ok: true, transaction: this.commit(r.value) } : r;
  }

  interpret(commands: JsCommands, context: SubmitContext): Result<PendingTransaction> {
    const offset = this.ledgerEnd + 1;
    const now = formatTimestamp(BigInt(this.#clock.now()) * 1000n);
    const r = CommandInterpreter.run(this, commands, now, offset);
    if (!r.ok) return r;
    return ok({ offset, effectiveAt: now, commands, context, interpreted: r.value });
  }

  commit(pending: PendingTransaction): CommittedTransaction {
    const { offset, commands, context, effectiveAt: now } = pending;
    if (offset !== this.ledgerEnd + 1) {
      throw new IllegalStateError(
        `interpreted for offset ${offset}, but the ledger end moved to ${this.ledgerEnd}: commit right after interpret`,
      );
    }
    const r = { value: pending.interpreted };
    const tx: CommittedTransaction = {
      updateId: this.#nextUpdateId(),
      offset,
      commandId: commands.commandId,
      workflowId: commands.workflowId ?? '',
      userId: context.userId,
      actAs: [...(commands.actAs ?? [])],
      readAs: [...(commands.readAs ?? [])],
      submissionId: commands.submissionId ?? '',
      effectiveAt: now,
      synchronizerId: this.synchronizerId,
      nodes: r.value.nodes,
    };
    const added: ContractMeta[] = [];
    for (const c of r.value.created) {
      const meta: ContractMeta = { record: c, archivedOffset: null, archive: null };
      this.#contracts.set(c.contractId, meta);
      added.push(meta);
      this.#active.add(c.contractId);
      if (c.keyText !== null)
        this.#keys.set(`${c.template.templateId}\u0000${c.keyText}`, c.contractId);
    }
    // Contracts created and archived within this transaction are recorded as archived, too.
    for (const node of tx.nodes) {
      if (node.kind !== 'exercise' || !node.consuming) continue;
      const id = node.contract.contractId;
      let meta = this.#contracts.get(id);
      if (meta === undefined) {
        meta = { record: node.contract, archivedOffset: null, archive: null };
        this.#contracts.set(id, meta);
        added.push(meta);
      }
      meta.archivedOffset = offset;
      meta.archive = { tx, node };
      this.#active.delete(id);
      const c = node.contract;
      if (c.keyText !== null) {
        const k = `${c.template.templateId}\u0000${c.keyText}`;
        if (this.#keys.get(k) === id) this.#keys.delete(k);
      }
    }
    // All of them were created at this offset, after every contract already in #byCreation.
    added.sort((a, b) => compareCreation(a.record, b.record));
    this.#byCreation.push(...added);
    this.#byOffset.set(offset, tx);
    this.#byUpdateId.set(tx.updateId, tx);
    this.#append({ kind: 'transaction', offset, transaction: tx });
    return tx;
  }

  recordCompletion(input: CompletionInput): Completion {
    const { transaction, lostInTransit, ...rest } = input;
    const offset = transaction?.offset ?? this.ledgerEnd + 1;
    const completion: Completion = {
      ...rest,
      offset,
      synchronizerTime: {
        synchronizerId: this.synchronizerId,
        recordTime: transaction?.effectiveAt ?? formatTimestamp(BigInt(this.#clock.now()) * 1000n),
      },
    };
    this.#append({
      kind: 'completion',
      offset,
      completion,
      ...(lostInTransit === true ? { lostInTransit: true } : {}),
    });
    return completion;
  }

  #append(entry: LogEntry): void {
    this.#log.push(entry);
    if (entry.offset > this.ledgerEnd) this.ledgerEnd = entry.offset;
    for (const l of this.#listeners) l(entry);
  }

  subscribe(listener: LogListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ---- reading ---------------------------------------------------------------------------------

  prune(offset: number): Result<null> {
    if (!Number.isInteger(offset) || offset <= 0) {
      return err(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: prune offset must be a positive integer, got ${offset}`,
        ),
      );
    }
    if (offset > this.ledgerEnd) {
      return err(
        engineError(
          'OFFSET_AFTER_LEDGER_END',
          12,
          `prune offset ${offset} is after the ledger end ${this.ledgerEnd}`,
        ),
      );
    }
    if (offset <= this.prunedUpTo) return ok(null);
    this.prunedUpTo = offset;
    this.#log = this.#log.filter((e) => e.offset > offset);
    for (const [o, tx] of this.#byOffset) {
      if (o > offset) continue;
      this.#byOffset.delete(o);
      this.#byUpdateId.delete(tx.updateId);
    }
    const pruned = (meta: ContractMeta): boolean =>
      meta.archivedOffset !== null && meta.archivedOffset <= offset;
    for (const [id, meta] of this.#contracts) {
      if (pruned(meta)) this.#contracts.delete(id);
    }
    this.#byCreation = this.#byCreation.filter((meta) => !pruned(meta));
    return ok(null);
  }

  checkOffset(offset: number, field: string): EngineError | null {
    if (offset > this.ledgerEnd) {
      return engineError(
        'OFFSET_AFTER_LEDGER_END',
        12,
        `${field} (${offset}) is after ledger end (${this.ledgerEnd})`,
        {
          context: { offset: String(offset), ledger_end: String(this.ledgerEnd) },
        },
      );
    }
    if (offset < this.prunedUpTo) {
      return engineError(
        'PARTICIPANT_PRUNED_DATA_ACCESSED',
        9,
        `${field} (${offset}) is before the pruning offset (${this.prunedUpTo})`,
        { context: { earliest_offset: String(this.prunedUpTo) } },
      );
    }
    return null;
  }

  #lowerBound(offset: number): number {
    // First log index with entry.offset > offset.
    let lo = 0;
    let hi = this.#log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#log[mid]!.offset > offset) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  entriesBetween(beginExclusive: number, endInclusive: number): readonly LogEntry[] {
    const out: LogEntry[] = [];
    for (let i = this.#lowerBound(beginExclusive); i < this.#log.length; i++) {
      const e = this.#log[i]!;
      if (e.offset > endInclusive) break;
      out.push(e);
    }
    return out;
  }

  transactionsBetween(
    beginExclusive: number,
    endInclusive: number,
  ): readonly CommittedTransaction[] {
    const out: CommittedTransaction[] = [];
    for (const e of this.entriesBetween(beginExclusive, endInclusive)) {
      if (e.kind === 'transaction') out.push(e.transaction);
    }
    return out;
  }

  transactionByOffset(offset: number): CommittedTransaction | undefined {
    return this.#byOffset.get(offset);
  }

  transactionById(updateId: string): CommittedTransaction | undefined {
    return this.#byUpdateId.get(updateId);
  }

  // ---- projections -----------------------------------------------------------------------------

  #filter(format: EventFormat): EventFilter | EngineError {
    return EventFilter.create(format, (id) => this.#resolver.resolve(id));
  }

  validateEventFormat(format: EventFormat): EngineError | null {
    const f = this.#filter(format);
    return f instanceof EventFilter ? null : f;
  }

  projectTransaction(tx: CommittedTransaction, format: TransactionFormat): JsTransaction | null {
    const f = this.#filter(format.eventFormat);
    if (!(f instanceof EventFilter)) return null;
    return projectTransaction(tx, f, format.transactionShape);
  }

  activeContractsAt(offset: number, format: EventFormat): readonly JsGetActiveContractsResponse[] {
    return this.activeContractsPage(offset, format, undefined, Infinity).activeContracts;
  }

  activeContractsPage(
    offset: number,
    format: EventFormat,
    after: ActiveContractsCursor | undefined,
    limit: number,
  ): ActiveContractsPage {
    const f = this.#filter(format);
    if (!(f instanceof EventFilter)) return { activeContracts: [], next: undefined };
    const out: JsGetActiveContractsResponse[] = [];
    let last: ContractRecord | undefined;
    for (let i = after === undefined ? 0 : this.#firstCreatedAfter(after); ; i++) {
      const meta = this.#byCreation[i];
      if (meta === undefined) break;
      const c = meta.record;
      if (c.createdOffset > offset) break;
      if (meta.archivedOffset !== null && meta.archivedOffset <= offset) continue;
      const m = f.match(c.template, c.stakeholders);
      if (m === null) continue;
      if (out.length >= limit) {
        return {
          activeContracts: out,
          next:
            last === undefined ? after : { offset: last.createdOffset, nodeId: last.createdNodeId },
        };
      }
      out.push({
        workflowId: this.#byOffset.get(c.createdOffset)?.workflowId ?? '',
        contractEntry: {
          JsActiveContract: {
            createdEvent: createdEvent(c, m.parties, true, m.match),
            synchronizerId: this.synchronizerId,
            reassignmentCounter: 0,
          },
        },
      });
      last = c;
    }
    return { activeContracts: out, next: undefined };
  }

  /** The index in #byCreation of the first contract created after `after`. */
  #firstCreatedAfter(after: ActiveContractsCursor): number {
    let lo = 0;
    let hi = this.#byCreation.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.#byCreation[mid]!.record;
      if (compareCreation(c, { createdOffset: after.offset, createdNodeId: after.nodeId }) > 0) {
        hi = mid;
      } else lo = mid + 1;
    }
    return lo;
  }

  eventsByContractId(
    contractId: string,
    format: EventFormat,
  ): JsGetEventsByContractIdResponse | null {
    const f = this.#filter(format);
    if (!(f instanceof EventFilter)) return null;
    const meta = this.#contracts.get(contractId);
    if (meta === undefined) return null;
    const c = meta.record;
    const m = f.match(c.template, c.stakeholders);
    if (m === null) return null;
    const response: JsGetEventsByContractIdResponse = {
      created: {
        createdEvent: createdEvent(c, m.parties, true, m.match),
        synchronizerId: this.synchronizerId,
      },
    };
    if (meta.archive !== null) {
      const { tx, node } = meta.archive;
      response.archived = {
        archivedEvent: {
          offset: tx.offset,
          nodeId: node.nodeId,
          contractId,
          templateId: c.template.templateId,
          witnessParties: m.parties,
          packageName: c.template.packageName,
          implementedInterfaces: m.match.views.map((v) => v.interfaceId),
        },
        synchronizerId: this.synchronizerId,
      };
    }
    return response;
  }
}

type CreationKey = Pick<ContractRecord, 'createdOffset' | 'createdNodeId'>;

function compareCreation(a: CreationKey, b: CreationKey): number {
  return a.createdOffset - b.createdOffset || a.createdNodeId - b.createdNodeId;
}

function randomHex(random: Random): string {
  let out = '';
  for (let i = 0; i < 4; i++) out += random.uuid().replace(/-/g, '');
  return out;
}

function dedupeRights(rights: readonly Right[]): Right[] {
  const seen = new Set<string>();
  return rights.filter((r) => {
    const k = rightKey(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
