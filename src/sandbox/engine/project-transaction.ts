import { sha256Hex } from '../../core/sha256-hex.js';
import { CelEvaluationError } from '../../rules/cel/cel-evaluation-error.js';
import type {
  ArchivedEvent,
  CreatedEvent,
  Event,
  ExercisedEvent,
  JsTransaction,
  TransactionFormat,
} from '../../ledger/wire/wire-types.js';
import type { DamlType, InterfaceDef, ValueExpr } from '../model/model-types.js';
import { interfaceInstance } from '../model/interface-instance.js';
import { normalizeDamlValue } from '../model/normalize-daml-value.js';
import { recordType } from '../model/record-type.js';
import { trimTrailingNones } from '../model/trim-trailing-nones.js';
import type {
  CommittedTransaction,
  ContractRecord,
  ExerciseNode,
} from './committed-transaction.js';
import type { EventFilter, FilterMatch } from './event-filter.js';

type JsInterfaceView = NonNullable<CreatedEvent['interfaceViews']>[number];

const wireForms = new WeakMap<object, unknown>();

/**
 * A stored value as the wire shows it (trailing Nones left out, NOTES.md Corrections). Computed
 * once per value object: a contract's argument is projected for every reader and every filter.
 */
function wireValue(type: DamlType, value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (wireForms.has(value)) return wireForms.get(value);
  const wire = trimTrailingNones(type, value);
  wireForms.set(value, wire);
  return wire;
}

/**
 * The `createdEventBlob`: base64 of the contract's JSON. Not Canton's protobuf, but stable and it
 * carries everything needed to rebuild the contract.
 */
export function createdEventBlob(c: ContractRecord): string {
  return Buffer.from(
    JSON.stringify({
      v: 1,
      contractId: c.contractId,
      templateId: c.template.templateId,
      packageName: c.template.packageName,
      createArgument: c.argument,
      signatories: c.signatories,
      observers: c.observers,
      contractKey: c.key,
      createdAt: c.createdAt,
    }),
  ).toString('base64');
}

function evalView(view: ValueExpr, scope: Record<string, unknown>): unknown {
  if (view.kind === 'cel') return view.expr.program.evaluate(scope);
  const out: Record<string, unknown> = {};
  for (const [k, v] of view.fields) out[k] = evalView(v, scope);
  return out;
}

function interfaceView(c: ContractRecord, iface: InterfaceDef): JsInterfaceView {
  const instance = interfaceInstance(c.template, iface, true);
  const failed = (message: string): JsInterfaceView => ({
    interfaceId: iface.interfaceId,
    viewStatus: { code: 9, message, details: [] },
    implementationPackageId: c.template.packageId,
  });
  if (instance === undefined)
    return failed(`${c.template.qualifiedName} does not implement ${iface.qualifiedName}`);
  if (instance.view === null) {
    return failed(
      `the sandbox computes no view of ${iface.qualifiedName} for ${c.template.templateId}: no model describes that template (docs/sandbox.md, "DAR templates")`,
    );
  }
  const viewType = instance.interface.viewType;
  try {
    const r = normalizeDamlValue(viewType, evalView(instance.view, { this: c.argument }), '', {
      round: true,
    });
    if (!r.ok) return failed(r.problem.message);
    return {
      interfaceId: iface.interfaceId,
      viewStatus: { code: 0, message: '', details: [] },
      viewValue: trimTrailingNones(viewType, r.value),
      implementationPackageId: c.template.packageId,
    };
  } catch (error) {
    if (error instanceof CelEvaluationError) return failed(error.message);
    throw error;
  }
}

export function createdEvent(
  c: ContractRecord,
  witnessParties: readonly string[],
  acsDelta: boolean,
  match: FilterMatch,
): CreatedEvent {
  const event: CreatedEvent = {
    offset: c.createdOffset,
    nodeId: c.createdNodeId,
    contractId: c.contractId,
    templateId: c.template.templateId,
    contractKeyHash:
      c.keyText === null
        ? ''
        : Buffer.from(sha256Hex(c.template.templateId + c.keyText), 'hex').toString('base64'),
    createArgument: wireValue(recordType(c.template.fields), c.argument),
    createdEventBlob: match.blob ? createdEventBlob(c) : '',
    interfaceViews: match.views.map((v) => interfaceView(c, v)),
    witnessParties: [...witnessParties],
    signatories: [...c.signatories],
    observers: [...c.observers],
    createdAt: c.createdAt,
    packageName: c.template.packageName,
    representativePackageId: c.template.packageId,
    acsDelta,
  };
  if (c.key !== null && c.template.key !== null)
    event.contractKey = wireValue(c.template.key.type, c.key);
  return event;
}

function archivedEvent(
  tx: CommittedTransaction,
  node: ExerciseNode,
  witnessParties: readonly string[],
  match: FilterMatch,
): ArchivedEvent {
  return {
    offset: tx.offset,
    nodeId: node.nodeId,
    contractId: node.contract.contractId,
    templateId: node.contract.template.templateId,
    witnessParties: [...witnessParties],
    packageName: node.contract.template.packageName,
    implementedInterfaces: match.views.map((v) => v.interfaceId),
  };
}

function exercisedEvent(
  tx: CommittedTransaction,
  node: ExerciseNode,
  witnessParties: readonly string[],
  acsDelta: boolean,
  match: FilterMatch,
): ExercisedEvent {
  const choice = node.choiceDef;
  const event: ExercisedEvent = {
    offset: tx.offset,
    nodeId: node.nodeId,
    contractId: node.contract.contractId,
    templateId: node.contract.template.templateId,
    choice: node.choice,
    choiceArgument: wireValue(recordType(choice.argument), node.choiceArgument),
    actingParties: [...node.actingParties],
    consuming: node.consuming,
    witnessParties: [...witnessParties],
    lastDescendantNodeId: node.lastDescendantNodeId,
    exerciseResult:
      choice.returns === null
        ? node.exerciseResult
        : wireValue(choice.returns, node.exerciseResult),
    packageName: node.contract.template.packageName,
    // Canton lists them for consuming exercises only (TransactionLogUpdatesConversions).
    implementedInterfaces: node.consuming ? match.views.map((v) => v.interfaceId) : [],
    acsDelta,
  };
  if (node.interfaceId !== null) event.interfaceId = node.interfaceId;
  return event;
}

function intersects(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.includes(x));
}

/**
 * The wire transaction as `format` shows it, or null when no event is visible.
 * ACS_DELTA: Created and Archived events of ACS-changing nodes, for requesting stakeholders.
 * LEDGER_EFFECTS: Created and Exercised events of every node a requesting party witnesses.
 */
export function projectTransaction(
  tx: CommittedTransaction,
  filter: EventFilter,
  shape: TransactionFormat['transactionShape'],
): JsTransaction | null {
  const events: Event[] = [];
  const ledgerEffects = shape === 'TRANSACTION_SHAPE_LEDGER_EFFECTS';
  for (const node of tx.nodes) {
    if (ledgerEffects) {
      const m = filter.match(node.contract.template, node.witnesses);
      if (m === null) continue;
      const acsDelta = node.acsDelta && intersects(m.parties, node.contract.stakeholders);
      events.push(
        node.kind === 'create'
          ? { CreatedEvent: createdEvent(node.contract, m.parties, acsDelta, m.match) }
          : { ExercisedEvent: exercisedEvent(tx, node, m.parties, acsDelta, m.match) },
      );
    } else {
      if (!node.acsDelta || (node.kind === 'exercise' && !node.consuming)) continue;
      const m = filter.match(node.contract.template, node.contract.stakeholders);
      if (m === null) continue;
      events.push(
        node.kind === 'create'
          ? { CreatedEvent: createdEvent(node.contract, m.parties, true, m.match) }
          : { ArchivedEvent: archivedEvent(tx, node, m.parties, m.match) },
      );
    }
  }
  if (events.length === 0) return null;
  // Canton shows the command id only to the submitting parties.
  const submitterAsks = filter.anyParty || tx.actAs.some((p) => filter.parties.includes(p));
  return {
    updateId: tx.updateId,
    commandId: submitterAsks ? tx.commandId : '',
    workflowId: tx.workflowId,
    effectiveAt: tx.effectiveAt,
    events,
    offset: tx.offset,
    synchronizerId: tx.synchronizerId,
    recordTime: tx.effectiveAt,
  };
}
