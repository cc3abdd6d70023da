import type { TriggerKey } from '../core/trigger-key.js';
import type { Command, DisclosedContract } from '../ledger/wire/wire-types.js';
import type { SourcePos } from './compiled-rule.js';
import type { RuleOptions } from './rule-options.js';

/**
 * One command a rule wants submitted: everything the runtime needs except the per-attempt ids
 * (`submissionId`) and the dedup period, which it anchors at `offset`.
 */
export type Intent = {
  readonly ruleId: string;
  readonly revision: number;
  /** 0-based position of the action in the rule's `then`. */
  readonly actionIndex: number;
  /** Deterministic: see commandIdFor. */
  readonly commandId: string;
  /** A wire `Command` (CreateCommand, ExerciseCommand, ...), arguments rendered. */
  readonly command: Command;
  /** Party ids, resolved from the rule's aliases. */
  readonly actAs: readonly string[];
  readonly readAs: readonly string[];
  /** The rule's `workflowId`, or the rule id. */
  readonly workflowId: string;
  readonly disclosedContracts: readonly DisclosedContract[];
  readonly triggerKey: TriggerKey;
  /**
   * The offset of the read that justified the intent: the triggering event's offset, or the
   * offset of the ACS snapshot a schedule slot read. Deduplication is anchored here.
   */
  readonly offset: number;
  readonly options: RuleOptions;
  /** Where the action is written. */
  readonly pos: SourcePos;
};

export type RuleEvaluationErrorCode =
  /** An expression failed: a missing field, a type mismatch, a division by zero. */
  | 'CEL_EVALUATION_ERROR'
  /** A `when` condition gave something other than true or false. */
  | 'NOT_A_BOOLEAN'
  /** An action's value has the wrong shape (a contract id that is not text, say). */
  | 'BAD_VALUE'
  /** An action names a party alias the bot config does not define. */
  | 'UNKNOWN_PARTY'
  /**
   * An interface rule's view could not be computed (the event's `viewStatus` is not OK, or the
   * view was not sent): the rule cannot see `event.view` for this event.
   */
  | 'INTERFACE_VIEW_FAILED';

/**
 * A rule that failed on one event (or one slot and contract). It is reported and counted; it
 * never stops the bot, and the rule produces no intents for that input.
 */
export type RuleEvaluationError = {
  readonly ruleId: string;
  readonly revision: number;
  readonly code: RuleEvaluationErrorCode;
  /** What went wrong, without the expression text. */
  readonly message: string;
  /** The failing expression as written, when one failed. */
  readonly expression: string | null;
  /** Where: the expression, or the action. */
  readonly pos: SourcePos;
  readonly phase: 'when' | 'then';
  /** The action, for errors in `then`. */
  readonly actionIndex: number | null;
};

/** Why a rule's trigger did not match the input. */
export type TriggerMismatch =
  /** The rule has `enabled: false`. */
  | 'rule-disabled'
  /** Another kind of event (created vs exercised vs archived), or a schedule rule. */
  | 'other-event-kind'
  /** The event is of another template (module and entity). */
  | 'other-template'
  /** Same module and entity, but another package (name, or id for package-id references). */
  | 'other-package'
  /** An exercise of another choice. */
  | 'other-choice'
  /** A consuming exercise where the rule wants non-consuming ones, or the reverse. */
  | 'other-consuming'
  /** The rule's party is not among the event's witnesses. */
  | 'party-not-witness'
  /** The rule's party alias is not in the bot config's parties. */
  | 'unknown-party';

export type ConditionOutcome = {
  readonly index: number;
  readonly source: string;
  readonly pos: SourcePos;
  /** `skipped`: an earlier condition was false or failed, so this one was not evaluated. */
  readonly outcome: 'true' | 'false' | 'error' | 'skipped';
};

/** Why a rule did or did not fire on one input: "why did (not) my rule fire". */
export type Explanation = {
  readonly ruleId: string;
  readonly revision: number;
  /** Where the rule is written. */
  readonly pos: SourcePos;
  readonly triggerMatched: boolean;
  /** Null when the trigger matched. */
  readonly mismatch: { readonly reason: TriggerMismatch; readonly message: string } | null;
  /** Each `when` condition, in order (empty when the trigger did not match). */
  readonly conditions: readonly ConditionOutcome[];
  /** True when every condition held and every action rendered. */
  readonly fired: boolean;
  /** Intents produced (one per action when fired). */
  readonly intents: number;
  readonly error: RuleEvaluationError | null;
  /**
   * For schedule rules with `forEach`: the contract this explanation is about (for a batch, its
   * first contract).
   */
  readonly contractId: string | null;
  /**
   * For a contract of a rule with `forEach.batch`: whether `when` selected it for a batch (its
   * commands come with the batch's explanation, so `fired` is false).
   */
  readonly selected?: boolean;
  /**
   * For a batch of a rule with `forEach.batch` (no conditions of its own): its contracts, in
   * order, and the rule's `batch.min` (a batch with fewer contracts does not fire).
   */
  readonly batch?: BatchExplanation;
};

export type BatchExplanation = {
  readonly contractIds: readonly string[];
  readonly min: number;
};

export type EvaluationResult = {
  readonly intents: readonly Intent[];
  /** One per rule considered (by default, the rules indexed under the event's template). */
  readonly explanations: readonly Explanation[];
  readonly errors: readonly RuleEvaluationError[];
};

/** `file:line:col: rule "id": message (in "expr")`, the form editors and logs understand. */
export function formatRuleEvaluationError(error: RuleEvaluationError): string {
  const where = `${error.pos.file}:${error.pos.line}:${error.pos.col}`;
  const expr = error.expression === null ? '' : ` in "${error.expression}"`;
  return `${where}: rule "${error.ruleId}": ${error.message}${expr}`;
}
