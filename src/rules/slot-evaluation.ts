import { CelDecimal } from './cel/cel-decimal.js';
import type { CreatedEvent } from '../ledger/wire/wire-types.js';
import type { BatchSpec, CompiledRule } from './compiled-rule.js';
import { errorSummary } from './render-value.js';
import { evaluateSlot, slotInput, startOfDay, type SlotContext } from './evaluate-slot.js';
import type {
  EvaluationResult,
  Explanation,
  Intent,
  RuleEvaluationError,
} from './evaluation-result.js';
import { checkConditions, renderActions, ruleError } from './fire-rule.js';
import { ruleVariable } from './rule-index.js';
import { RULE_LIMITS } from './rule-language.js';

/** A contract `when` selected for a batch: its CEL value (`contract`) and its id. */
type Selected = { readonly value: unknown; readonly contractId: string };

const NO_RESULT: EvaluationResult = Object.freeze({ intents: [], explanations: [], errors: [] });

/**
 * One slot of one schedule rule, fed the active contracts of its snapshot one at a time, in the
 * order they are read (`contract`), then closed (`end`). Every result comes as soon as it is
 * known, so a caller streaming pages of contracts hands intents on without holding the slot:
 *
 * - without `forEach`, `end` fires the rule once;
 * - with `forEach`, `contract` fires it for that contract (evaluateSlot);
 * - with `forEach.batch`, `contract` runs `when` on the contract and keeps it when selected;
 *   once its group holds `batch.size` contracts, the batch fires (`contracts` = their values, in
 *   order); `end` fires what the groups still hold, in the order the groups were opened (a batch
 *   of fewer than `batch.min` does not fire). Memory: at most `batch.size` contracts per open
 *   group and RULE_LIMITS.BATCH_PENDING_MAX in all (beyond it, the group open longest fires
 *   early), whatever the size of the snapshot.
 *
 * A batch's trigger key is the slot and its first contract id: the same snapshot, read in the
 * same order, makes the same batches and so the same commandIds, which is what a re-run of an
 * interrupted slot at its recorded offset relies on. Pure: no I/O, no clock.
 */
export class SlotEvaluation {
  readonly #rule: CompiledRule;
  readonly #slot: Date;
  readonly #context: SlotContext;
  readonly #batch: BatchSpec | null;
  /** Open groups by key, in the order they were opened (Map keeps insertion order). */
  readonly #groups = new Map<string, Selected[]>();
  #pending = 0;
  #ended = false;

  constructor(rule: CompiledRule, slot: Date, context: SlotContext) {
    this.#rule = rule;
    this.#slot = slot;
    this.#context = context;
    this.#batch = rule.trigger.kind === 'schedule' ? (rule.trigger.forEach?.batch ?? null) : null;
  }

  /** One active contract of the snapshot (rules with `forEach`). */
  contract(contract: CreatedEvent): EvaluationResult {
    const batch = this.#batch;
    if (batch === null) return evaluateSlot(this.#rule, this.#slot, contract, this.#context);
    const input = slotInput(this.#rule, this.#slot, contract, this.#context);
    if (input.kind === 'done') return input.result;
    const rule = this.#rule;
    const contractId = contract.contractId;
    const when = checkConditions(rule, input.variables);
    let error = when.error;
    let key = '';
    if (when.holds && batch.groupBy !== null) {
      try {
        key = groupKey(batch.groupBy.program.evaluate(input.variables));
      } catch (thrown) {
        error = ruleError(
          rule,
          'CEL_EVALUATION_ERROR',
          errorSummary(thrown),
          batch.groupBy.source,
          {
            pos: batch.groupBy.pos,
            phase: 'when',
            actionIndex: null,
          },
        );
      }
    }
    const selected = when.holds && error === null;
    const explanation: Explanation = {
      ruleId: rule.id,
      revision: rule.revision,
      pos: rule.pos,
      triggerMatched: true,
      mismatch: null,
      conditions: when.conditions,
      fired: false,
      intents: 0,
      error,
      contractId,
      selected,
    };
    const own: EvaluationResult = {
      intents: [],
      explanations: [explanation],
      errors: error === null ? [] : [error],
    };
    if (!selected) return own;
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = [];
      this.#groups.set(key, group);
    }
    group.push({ value: input.variables.contract, contractId });
    this.#pending++;
    // Most contracts close no batch: the list of what they fire is made only when one does.
    let fired: EvaluationResult[] | undefined;
    if (group.length >= batch.size) fired = [own, this.#close(key, batch)];
    while (this.#pending > RULE_LIMITS.BATCH_PENDING_MAX) {
      const oldest = this.#groups.keys().next();
      if (oldest.done === true) break;
      (fired ??= [own]).push(this.#close(oldest.value, batch));
    }
    return fired === undefined ? own : merge(fired);
  }

  /**
   * After the last contract: without `forEach`, the slot's one firing; with `forEach.batch`, the
   * batches the groups still hold. Call it once.
   */
  end(): EvaluationResult {
    if (this.#ended) return NO_RESULT;
    this.#ended = true;
    const trigger = this.#rule.trigger;
    if (trigger.kind === 'schedule' && trigger.forEach === null) {
      return evaluateSlot(this.#rule, this.#slot, null, this.#context);
    }
    const batch = this.#batch;
    if (batch === null || this.#groups.size === 0) return NO_RESULT;
    const results = [...this.#groups.keys()].map((key) => this.#close(key, batch));
    return merge(results);
  }

  /** Fires the batch group `key` holds (unless below `min`) and forgets the group. */
  #close(key: string, batch: BatchSpec): EvaluationResult {
    const members = this.#groups.get(key) ?? [];
    this.#groups.delete(key);
    this.#pending -= members.length;
    const rule = this.#rule;
    const first = members[0]?.contractId ?? null;
    const explained = (
      fired: boolean,
      intents: readonly Intent[],
      error: RuleEvaluationError | null,
    ): EvaluationResult => ({
      intents,
      explanations: [
        {
          ruleId: rule.id,
          revision: rule.revision,
          pos: rule.pos,
          triggerMatched: true,
          mismatch: null,
          conditions: [],
          fired,
          intents: intents.length,
          error,
          contractId: first,
          batch: { contractIds: members.map((m) => m.contractId), min: batch.min },
        },
      ],
      errors: error === null ? [] : [error],
    });
    if (first === null || members.length < batch.min) return explained(false, [], null);
    const trigger = rule.trigger;
    const variables: Record<string, unknown> = {
      parties: this.#context.parties,
      rule: ruleVariable(rule),
      now: this.#slot,
      today: startOfDay(this.#slot, trigger.kind === 'schedule' ? trigger.timezone : 'UTC'),
      contracts: members.map((m) => m.value),
    };
    const { intents, error } = renderActions(rule, {
      variables,
      parties: this.#context.parties,
      triggerKey: { kind: 'slot', slot: this.#slot.getTime(), contractId: first },
      offset: this.#context.snapshotOffset,
      contractId: first,
    });
    return explained(error === null, intents, error);
  }
}

function merge(results: readonly EvaluationResult[]): EvaluationResult {
  return {
    intents: results.flatMap((r) => r.intents),
    explanations: results.flatMap((r) => r.explanations),
    errors: results.flatMap((r) => r.errors),
  };
}

/**
 * The text a `groupBy` value is grouped by: equal values give equal texts, values of different
 * types different ones (`"1"` and `1` are two groups), and map keys are sorted so that the order
 * fields arrive in does not matter.
 */
export function groupKey(value: unknown, depth = 0): string {
  if (depth > 100) throw new RangeError('groupBy: the value is nested too deeply');
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${String(value)}`;
  if (value instanceof CelDecimal) return `decimal(${value.toString()})`;
  if (value instanceof Date) return `timestamp(${value.toISOString()})`;
  if (Array.isArray(value)) return `[${value.map((v) => groupKey(v, depth + 1)).join(',')}]`;
  if (value instanceof Map) {
    const entries = [...value].map(([k, v]) => [groupKey(k, depth + 1), v] as const);
    return mapText(entries, depth);
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => [JSON.stringify(k), v] as const);
    return mapText(entries, depth);
  }
  throw new RangeError(`groupBy gave a ${typeof value}, which cannot group contracts`);
}

function mapText(entries: readonly (readonly [string, unknown])[], depth: number): string {
  const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${sorted.map(([k, v]) => `${k}:${groupKey(v, depth + 1)}`).join(',')}}`;
}
