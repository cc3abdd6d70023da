import type { Clock } from '../../core/clock.js';
import { IllegalStateError } from '../../core/illegal-state-error.js';
import type { Random } from '../../core/random.js';
import { sha256Hex } from '../../core/sha256-hex.js';
import type {
  Completion,
  EventFormat,
  JsCommands,
  JsGetActiveContractsResponse,
  JsGetEventsByContractIdResponse,
  JsTransaction,
  TransactionFormat,
} from '../../ledger/wire/wire-types.js';
import type { PackageModel, TemplateDef } from '../model/model-types.js';
import { formatTimestamp } from '../model/daml-time.js';
import { CommandInterpreter } from './command-interpreter.js';
import type { CommittedTransaction, ContractRecord } from './committed-transaction.js';
import { ContractStore } from './contract-store.js';
import { engineError, type EngineError } from './engine-error.js';
import type { LedgerEngine } from './engine-ports.js';
import type { InterpreterLedger } from './transaction-view.js';
import type {
  ActiveContractsCursor,
  ActiveContractsPage,
  CompletionInput,
  LedgerEngineOptions,
  LogListener,
  LogEntry,
  PendingTransaction,
  Result,
  SubmitContext,
  SubmitOutcome,
} from './engine-types.js';
import { EventFilter } from './event-filter.js';
import { IdentityRegistry } from './identity-registry.js';
import { LedgerLog } from './ledger-log.js';
import { createdEvent, projectTransaction } from './project-transaction.js';
import { TemplateResolver } from './template-resolver.js';

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const err = <T>(error: EngineError): Result<T> => ({ ok: false, error });

/**
 * The engine: the parties and users (the `IdentityRegistry` it extends, whose methods are the
 * `PartyAdmin` port as they stand), the contracts (`ContractStore`) and the log (`LedgerLog`),
 * and what ties them together: commands interpreted against the contracts and committed to the
 * log, pruning of both, and the projections of a party's view.
 * See `LedgerEngine` (engine-ports.ts) for the contract of each method.
 */
export class LedgerState extends IdentityRegistry implements LedgerEngine, InterpreterLedger {
  readonly participantId: string;
  readonly synchronizerId: string;
  readonly packages: readonly PackageModel[];

  readonly #clock: Clock;
  readonly #resolver: TemplateResolver;
  readonly #idSeed: string;
  #idCounter = 0;
  readonly #contracts = new ContractStore();
  readonly #log = new LedgerLog();

  constructor(options: LedgerEngineOptions) {
    const namespace = options.participantId.split('::')[1] ?? sha256Hex(options.participantId);
    super(namespace);
    this.participantId = options.participantId;
    this.synchronizerId = options.synchronizerId ?? `sandbox::${namespace}`;
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

  // ---- contracts (InterpreterLedger) -----------------------------------------------------------

  resolveTemplate(id: string): ReturnType<TemplateResolver['resolve']> {
    return this.#resolver.resolve(id);
  }

  activeContract(contractId: string): ContractRecord | undefined {
    return this.#contracts.active(contractId);
  }

  activeContractByKey(template: TemplateDef, keyText: string): string | undefined {
    return this.#contracts.activeByKey(template, keyText);
  }

  // ---- commands --------------------------------------------------------------------------------

  submit(commands: JsCommands, context: SubmitContext): SubmitOutcome {
    const r = this.interpret(commands, context);
    return r.ok ? { ok: true, transaction: this.commit(r.value) } : r;
  }

  interpret(commands: JsCommands, context: SubmitContext): Result<PendingTransaction> {
    const offset = this.#log.end + 1;
    const now = formatTimestamp(BigInt(this.#clock.now()) * 1000n);
    const r = CommandInterpreter.run(this, commands, now, offset);
    if (!r.ok) return r;
    return ok({ offset, effectiveAt: now, commands, context, interpreted: r.value });
  }

  commit(pending: PendingTransaction): CommittedTransaction {
    const { offset, commands, context, effectiveAt: now } = pending;
    if (offset !== this.#log.end + 1) {
      throw new IllegalStateError(
        `interpreted for offset ${offset}, but the ledger end moved to ${this.#log.end}: commit right after interpret`,
      );
    }
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
      nodes: pending.interpreted.nodes,
    };
    this.#contracts.commit(tx, pending.interpreted.created);
    this.#log.append({ kind: 'transaction', offset, transaction: tx });
    return tx;
  }

  recordCompletion(input: CompletionInput): Completion {
    const { transaction, lostInTransit, ...rest } = input;
    const offset = transaction?.offset ?? this.#log.end + 1;
    const completion: Completion = {
      ...rest,
      offset,
      synchronizerTime: {
        synchronizerId: this.synchronizerId,
        recordTime: transaction?.effectiveAt ?? formatTimestamp(BigInt(this.#clock.now()) * 1000n),
      },
    };
    this.#log.append({
      kind: 'completion',
      offset,
      completion,
      ...(lostInTransit === true ? { lostInTransit: true } : {}),
    });
    return completion;
  }

  subscribe(listener: LogListener): () => void {
    return this.#log.subscribe(listener);
  }

  // ---- reading (LedgerLog) ---------------------------------------------------------------------

  ledgerEnd(): number {
    return this.#log.end;
  }

  prunedUpToInclusive(): number {
    return this.#log.prunedUpTo;
  }

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
    if (offset > this.#log.end) {
      return err(
        engineError(
          'OFFSET_AFTER_LEDGER_END',
          12,
          `prune offset ${offset} is after the ledger end ${this.#log.end}`,
        ),
      );
    }
    if (this.#log.prune(offset)) this.#contracts.prune(offset);
    return ok(null);
  }

  checkOffset(offset: number, field: string): EngineError | null {
    return this.#log.checkOffset(offset, field);
  }

  entriesBetween(
    beginExclusive: number,
    endInclusive: number,
    limit?: number,
  ): readonly LogEntry[] {
    return this.#log.entriesBetween(beginExclusive, endInclusive, limit);
  }

  transactionsBetween(
    beginExclusive: number,
    endInclusive: number,
    limit?: number,
    descending?: boolean,
  ): readonly CommittedTransaction[] {
    return this.#log.transactionsBetween(beginExclusive, endInclusive, limit, descending);
  }

  transactionByOffset(offset: number): CommittedTransaction | undefined {
    return this.#log.transactionByOffset(offset);
  }

  transactionById(updateId: string): CommittedTransaction | undefined {
    return this.#log.transactionById(updateId);
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
    for (const c of this.#contracts.activeAt(offset, after)) {
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
        workflowId: this.#log.transactionByOffset(c.createdOffset)?.workflowId ?? '',
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

  eventsByContractId(
    contractId: string,
    format: EventFormat,
  ): JsGetEventsByContractIdResponse | null {
    const f = this.#filter(format);
    if (!(f instanceof EventFilter)) return null;
    const stored = this.#contracts.get(contractId);
    if (stored === undefined) return null;
    const c = stored.record;
    const m = f.match(c.template, c.stakeholders);
    if (m === null) return null;
    const response: JsGetEventsByContractIdResponse = {
      created: {
        createdEvent: createdEvent(c, m.parties, true, m.match),
        synchronizerId: this.synchronizerId,
      },
    };
    if (stored.archive !== null) {
      const { tx, node } = stored.archive;
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

function randomHex(random: Random): string {
  let out = '';
  for (let i = 0; i < 4; i++) out += random.uuid().replace(/-/g, '');
  return out;
}
