import { interfaceInstance } from '../model/interface-instance.js';
import type { TemplateDef } from '../model/model-types.js';
import type { ContractRecord } from './committed-transaction.js';
import { engineError, type EngineError } from './engine-error.js';
import { fail } from './interpreter-abort.js';
import type { ResolvedId } from './template-resolver.js';

/** What the interpreter needs from the ledger; reads only (the commit happens elsewhere). */
export interface InterpreterLedger {
  resolveTemplate(templateId: string): ResolvedId | EngineError;
  isKnownParty(party: string): boolean;
  /** The active contract, or undefined when unknown or archived. */
  activeContract(contractId: string): ContractRecord | undefined;
  /** The active contract with this key, or undefined. */
  activeContractByKey(template: TemplateDef, keyText: string): string | undefined;
  nextContractId(): string;
}

/**
 * The ledger as the transaction being interpreted sees it: the active contracts, minus those it
 * archived, plus those it created; and template ids resolved or failed. Lookups fail the
 * transaction the way Canton's do (CONTRACT_NOT_FOUND, WRONGLY_TYPED_CONTRACT, ...).
 */
export class TransactionView {
  readonly #ledger: InterpreterLedger;
  readonly #readers: ReadonlySet<string>;
  readonly #local = new Map<string, ContractRecord>();
  readonly #localArchived = new Set<string>();
  readonly #localKeys = new Map<string, string>();
  readonly #archivedBefore: ContractRecord[] = [];

  /** `readers`: the actAs and readAs parties, whose contracts the commands may use. */
  constructor(ledger: InterpreterLedger, readers: ReadonlySet<string>) {
    this.#ledger = ledger;
    this.#readers = readers;
  }

  // ---- templates ---------------------------------------------------------------------------------

  resolve(templateId: string): ResolvedId {
    const resolved = this.#ledger.resolveTemplate(templateId);
    if ('code' in resolved) return fail(resolved);
    return resolved;
  }

  template(templateId: string): TemplateDef {
    const resolved = this.resolve(templateId);
    if (resolved.kind !== 'template') {
      return fail(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: ${templateId} is an interface, not a template`,
        ),
      );
    }
    return resolved.template;
  }

  /** Steps name templates of the same package by `Module:Entity`. */
  sibling(of: TemplateDef, qualifiedName: string): TemplateDef {
    const resolved = this.resolve(`${of.packageId}:${qualifiedName}`);
    if (resolved.kind !== 'template')
      return fail(
        engineError('DAML_INTERPRETATION_ERROR', 9, `${qualifiedName} is not a template`),
      );
    return resolved.template;
  }

  // ---- contracts ---------------------------------------------------------------------------------

  nextContractId(): string {
    return this.#ledger.nextContractId();
  }

  /** A contract this transaction created (and may have archived again). */
  createdHere(contractId: string): ContractRecord | undefined {
    return this.#local.get(contractId);
  }

  lookupKey(template: TemplateDef, keyText: string): string | undefined {
    const local = this.#localKeys.get(keyOf(template, keyText));
    if (local !== undefined) return this.#localArchived.has(local) ? undefined : local;
    const global = this.#ledger.activeContractByKey(template, keyText);
    return global === undefined || this.#localArchived.has(global) ? undefined : global;
  }

  /** Active, visible to the submitters, and of the expected template (or implementing the interface). */
  fetchVisible(contractId: string, expected: ResolvedId): ContractRecord {
    const contract = this.#lookup(contractId);
    const visible =
      contract !== undefined &&
      (this.#local.has(contractId) || contract.stakeholders.some((p) => this.#readers.has(p)));
    if (contract === undefined || !visible) {
      return fail(
        engineError('CONTRACT_NOT_FOUND', 11, `Contract could not be found with id ${contractId}`, {
          resources: [['CONTRACT_ID', contractId]],
        }),
      );
    }
    const ok =
      expected.kind === 'template'
        ? contract.template.templateId === expected.template.templateId ||
          (contract.template.packageName === expected.template.packageName &&
            contract.template.qualifiedName === expected.template.qualifiedName)
        : interfaceInstance(contract.template, expected.iface, true) !== undefined;
    if (!ok) {
      const wanted =
        expected.kind === 'template' ? expected.template.templateId : expected.iface.interfaceId;
      return fail(
        engineError(
          'WRONGLY_TYPED_CONTRACT',
          9,
          `Interpretation error: Error: contract ${contractId} (${contract.template.templateId}) not of type ${wanted}`,
          {
            resources: [
              ['CONTRACT_ID', contractId],
              ['TEMPLATE_ID', wanted],
            ],
          },
        ),
      );
    }
    return contract;
  }

  /** Records a contract this transaction creates. */
  create(record: ContractRecord): void {
    this.#local.set(record.contractId, record);
    if (record.keyText !== null) {
      this.#localKeys.set(keyOf(record.template, record.keyText), record.contractId);
    }
  }

  /**
   * Records an exercise of `contract` (archived when `consuming`). Returns whether it was active
   * before this transaction (then a consuming exercise is part of the ACS delta).
   */
  recordExercise(contract: ContractRecord, consuming: boolean): boolean {
    const wasActiveBefore = !this.#local.has(contract.contractId);
    if (consuming) {
      this.#localArchived.add(contract.contractId);
      if (wasActiveBefore) this.#archivedBefore.push(contract);
    }
    return wasActiveBefore;
  }

  archivedHere(contractId: string): boolean {
    return this.#localArchived.has(contractId);
  }

  /** The contracts this transaction created and left active. */
  created(): ContractRecord[] {
    return [...this.#local.values()].filter((c) => !this.#localArchived.has(c.contractId));
  }

  /** The contracts active before this transaction that it archived. */
  archivedBefore(): readonly ContractRecord[] {
    return this.#archivedBefore;
  }

  #lookup(contractId: string): ContractRecord | undefined {
    if (this.#localArchived.has(contractId)) return undefined;
    return this.#local.get(contractId) ?? this.#ledger.activeContract(contractId);
  }
}

function keyOf(template: TemplateDef, keyText: string): string {
  return `${template.templateId}\u0000${keyText}`;
}
