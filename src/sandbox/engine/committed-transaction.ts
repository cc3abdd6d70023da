import type { ChoiceDef, TemplateDef } from '../model/model-types.js';

/** A contract as the ledger stores it (immutable; activeness lives in the ledger state). */
export type ContractRecord = {
  readonly contractId: string;
  readonly template: TemplateDef;
  /** The create argument in Daml-LF JSON, normalised to the template's field types. */
  readonly argument: Readonly<Record<string, unknown>>;
  readonly signatories: readonly string[];
  readonly observers: readonly string[];
  /** Signatories and observers, sorted, without duplicates. */
  readonly stakeholders: readonly string[];
  /** The key value in Daml-LF JSON, or null for a template without key. */
  readonly key: unknown;
  /** Canonical text of the key (lookup index), or null. */
  readonly keyText: string | null;
  readonly maintainers: readonly string[];
  /** ISO-8601 UTC. */
  readonly createdAt: string;
  /** The offset of the transaction that created it. */
  readonly createdOffset: number;
  /** The node id of its create node in that transaction. */
  readonly createdNodeId: number;
};

type NodeBase = {
  readonly nodeId: number;
  readonly contract: ContractRecord;
  /** Parties that must be told about this node itself. */
  readonly informees: readonly string[];
  /** Informees of this node and of every ancestor exercise, sorted. */
  readonly witnesses: readonly string[];
  readonly acsDelta: boolean;
};

export type CreateNode = NodeBase & { readonly kind: 'create' };

export type ExerciseNode = NodeBase & {
  readonly kind: 'exercise';
  readonly choice: string;
  /** The choice exercised: the template's own, or its implementation of the interface's. */
  readonly choiceDef: ChoiceDef;
  /** `<packageId>:Module:Entity` when exercised through an interface; null otherwise. */
  readonly interfaceId: string | null;
  readonly choiceArgument: unknown;
  readonly actingParties: readonly string[];
  readonly consuming: boolean;
  readonly lastDescendantNodeId: number;
  readonly exerciseResult: unknown;
};

export type TxNode = CreateNode | ExerciseNode;

/** A transaction as committed: the full LEDGER_EFFECTS tree, in pre-order (index = nodeId). */
export type CommittedTransaction = {
  readonly updateId: string;
  readonly offset: number;
  readonly commandId: string;
  readonly workflowId: string;
  readonly userId: string;
  readonly actAs: readonly string[];
  readonly readAs: readonly string[];
  readonly submissionId: string;
  /** ISO-8601 UTC; also the record time. */
  readonly effectiveAt: string;
  readonly synchronizerId: string;
  readonly nodes: readonly TxNode[];
};
