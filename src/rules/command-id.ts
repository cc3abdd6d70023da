import { IllegalStateError } from '../core/illegal-state-error.js';
import { sha256Hex } from '../core/sha256-hex.js';
import type { TriggerKey } from '../core/trigger-key.js';

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
        ? `["slot",${JSON.stringify(slotText(key.slot))},${key.contractId === null ? 'null' : JSON.stringify(key.contractId)}]`
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

/**
 * The slot as the encoding has hashed it since v1, when keys carried the slot as ISO-8601 UTC
 * text: the ids of slots journalled by earlier versions stay the same.
 */
function slotText(slot: number): string {
  if (!Number.isSafeInteger(slot)) {
    throw new IllegalStateError(`slot ${slot} is not a time in epoch milliseconds`);
  }
  return new Date(slot).toISOString();
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
