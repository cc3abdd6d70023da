/**
 * What made a rule fire: the identity of one firing. The rules hash it into the commandId
 * (`commandIdFor`), and the journal keeps it with the intent (`Store`), so both read this one
 * type; it lives in core because neither layer may import the other.
 *
 * - `event`: an event rule fires once per ledger event; `updateId` + `nodeId` name that event on
 *   this participant. (A consuming exercise and the archive it causes share the node id, so an
 *   `archived` rule gets the same key from either stream shape.)
 * - `slot`: a schedule rule fires once per slot and contract: `slot` is the slot time in epoch
 *   ms, `contractId` the `forEach` contract, or null without `forEach`.
 * - `contract`: a `created` rule recovered from the active contract set after the participant
 *   pruned the creating update (so its `updateId` can no longer be read) fires once per
 *   contract: `contractId` names the creation as uniquely as `updateId` + `nodeId` do, so it
 *   alone goes into the commandId, and every replica and every restart that recovers the same
 *   contract gets the same key. `nodeId` is the creation's node id, kept for the journal; the
 *   intent's offset is the pruning offset the set was read at. The key differs from the `event`
 *   key the live stream would have given, which is why the runtime first looks for an intent of
 *   the same creation in its journal (docs/runtime.md, pruning).
 */
export type TriggerKey = EventTriggerKey | SlotTriggerKey | ContractTriggerKey;

export type EventTriggerKey = {
  readonly kind: 'event';
  readonly updateId: string;
  readonly nodeId: number;
};

export type SlotTriggerKey = {
  readonly kind: 'slot';
  /** Epoch ms. */
  readonly slot: number;
  readonly contractId: string | null;
};

export type ContractTriggerKey = {
  readonly kind: 'contract';
  readonly contractId: string;
  readonly nodeId: number;
};
