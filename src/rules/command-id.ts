import { IllegalStateError } from '../core/illegal-state-error.js';
import { sha256Hex } from '../core/sha256-hex.js';

/**
 * What made a rule fire, as far as command deduplication is concerned.
 * - An event rule fires once per ledger event: `updateId` + `nodeId` name that event on this
 *   participant. (A consuming exercise and the archive it causes share the node id, so an
 *   `archived` rule gets the same key from either stream shape.)
 * - A schedule rule fires once per slot and contract: `slot` is the slot time as ISO-8601 UTC
 *   (`Date.toISOString()`), `contractId` the `forEach` contract, or null without `forEach`.
 * - A `created` rule recovered from the active contract set after the participant pruned the
 *   creating update (so its `updateId` can no longer be read) fires once per contract:
 *   `contractId` names the creation as uniquely as `updateId` + `nodeId` do. Every replica and
 *   every restart that recovers the same contract this way gets the same key; it differs from
 *   the `event` key the live stream would have given, which is why the runtime first looks for
 *   an intent of the same creation in its journal (see docs/runtime.md, pruning).
 */
export type TriggerKey =
  | { readonly kind: 'event'; readonly updateId: string; readonly nodeId: number }
  | { readonly kind: 'slot'; readonly slot: string; readonly contractId: string | null }
  | { readonly kind: 'contract'; readonly contractId: string };

export type CommandIdInput = {
  readonly ruleId: string;
  readonly revision: number;
  /** Party ids (not aliases); order and repeats do not matter, as in the ledger's change id. */
  readonly actAs: readonly string[];
  readonly triggerKey: TriggerKey;
  /** 0-based position of the action in the rule's `then`. */
  readonly actionIndex: number;
};

/**
 * Hex characters of the sha256 kept in the id: 128 bits. Ids only need to be unique per rule
 * (the rule id is in clear text in front) and per actAs set (part of the ledger's change id). By
 * the birthday bound, one rule would have to fire about 2.6e16 times for a one-in-a-million chance
 * of any two of its ids colliding; a billion firings give a probability of about 1.5e-21.
 */
export const COMMAND_ID_HASH_CHARS = 32;

/**
 * Characters every LedgerString accepts. Daml-LF (`Ref.LedgerString`) allows letters, digits and
 * `._:-#/ ` up to 255 characters; the Ledger API docs list `[A-Za-z0-9#:\-_/ ]`. We check against
 * the narrower of the two.
 */
const LEDGER_STRING = /^[A-Za-z0-9#:\-_/ ]{1,255}$/;

/** Rule ids already known to make valid ids; rule sets are small, so this stays small. */
const checkedRuleIds = new Set<string>();

/** Bumped only if the encoding below changes, which would re-fire every rule once. */
const ENCODING_VERSION = 'ledgerbot/command-id/v1';

/**
 * The deterministic commandId of one action of one firing of a rule: `lb-<ruleId>-<hash>`.
 *
 * Replaying the same trigger (after a crash, a retry, or on a second replica) gives the same id,
 * so the ledger's deduplication drops the duplicate. Editing the rule's conditions or actions
 * does not change the id; bumping `revision` does, which is how users re-fire on purpose.
 *
 * The hashed text is a JSON array, so no two different inputs encode alike (plain concatenation
 * would make ("a-b", "c") and ("a", "b-c") collide).
 */
export function commandIdFor(input: CommandIdInput): string {
  const actAs =
    input.actAs.length === 1 ? input.actAs : [...new Set(input.actAs)].sort(compareCodeUnits);
  const key = input.triggerKey;
  // The JSON text of [version, ruleId, revision, actAs, key, actionIndex], built by hand because
  // this runs once per intent and JSON.stringify of the whole array costs more than the hash.
  // Each kind starts with its own tag, so no key of one kind encodes like a key of another.
  const keyText =
    key.kind === 'event'
      ? `["event",${JSON.stringify(key.updateId)},${jsonNumber(key.nodeId)}]`
      : key.kind === 'slot'
        ? `["slot",${JSON.stringify(key.slot)},${key.contractId === null ? 'null' : JSON.stringify(key.contractId)}]`
        : `["contract",${JSON.stringify(key.contractId)}]`;
  const encoded = `[${JSON.stringify(ENCODING_VERSION)},${JSON.stringify(input.ruleId)},${jsonNumber(input.revision)},[${actAs.map((p) => JSON.stringify(p)).join(',')}],${keyText},${jsonNumber(input.actionIndex)}]`;
  const id = `lb-${input.ruleId}-${sha256Hex(encoded).slice(0, COMMAND_ID_HASH_CHARS)}`;
  // Whether the id is valid depends on the rule id only (the rest is fixed text and hex).
  if (!checkedRuleIds.has(input.ruleId)) {
    if (LEDGER_STRING.test(id)) checkedRuleIds.add(input.ruleId);
    else {
      // Rule ids are validated at load, so this is a bug, not a user mistake.
      throw new IllegalStateError(
        `rule id "${input.ruleId}" makes a commandId that is not a LedgerString of at most 255 characters`,
      );
    }
  }
  return id;
}

function jsonNumber(n: number): string {
  return JSON.stringify(n);
}

/** Whether `text` is a valid LedgerString (for commandIds, workflowIds and the like). */
export function isLedgerString(text: string): boolean {
  return LEDGER_STRING.test(text);
}

/** Plain UTF-16 order: unlike localeCompare, the same on every machine and locale. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
