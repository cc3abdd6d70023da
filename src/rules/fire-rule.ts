import { ActionProblem, describeValue } from './action-problem.js';
import { buildIntent, type IntentInputs } from './build-intent.js';
import type { CompiledRule } from './compiled-rule.js';
import type {
  ConditionOutcome,
  Explanation,
  Intent,
  RuleEvaluationError,
  RuleEvaluationErrorCode,
} from './evaluation-result.js';
import { errorSummary, RenderFailure } from './render-value.js';

/** What a matched trigger hands to the rule's conditions and actions. */
export type Firing = IntentInputs & {
  readonly contractId: string | null;
};

export type FireResult = {
  readonly explanation: Explanation;
  readonly intents: readonly Intent[];
  /** A `when` condition was false (what the bot's match counters count). */
  readonly conditionFalse: boolean;
};

/** The actions of a rule whose conditions did not hold: one object, none allocated per event. */
const NO_ACTIONS = Object.freeze({ intents: Object.freeze<Intent[]>([]), error: null });

/**
 * Evaluates a rule whose trigger matched: each `when` condition in order (stopping at the first
 * that is false or fails), then every action. A rule fires all of its actions or none: when one
 * action cannot be rendered, the rule reports the error and produces no intents for this input.
 */
export function fireRule(rule: CompiledRule, firing: Firing): FireResult {
  const when = checkConditions(rule, firing.variables);
  if (!when.holds && when.error === null && firing.contractId === null) {
    // A condition was false: the result depends on which one only (most evaluations end so).
    return notFiredResult(rule, when.conditions);
  }
  const then = when.holds && when.error === null ? renderActions(rule, firing) : NO_ACTIONS;
  const error = when.error ?? then.error;
  const fired = when.holds && error === null;
  return {
    explanation: {
      ruleId: rule.id,
      revision: rule.revision,
      pos: rule.pos,
      triggerMatched: true,
      mismatch: null,
      conditions: when.conditions,
      fired,
      intents: then.intents.length,
      error,
      contractId: firing.contractId,
    },
    intents: then.intents,
    conditionFalse: !when.holds && when.error === null,
  };
}

const firstFalse = new WeakMap<CompiledRule, Explanation>();

/**
 * The explanation of an event rule whose first condition is false (its trigger matched; the
 * later conditions skipped): what fireRule gives then, for a rule the index shows false without
 * evaluating it (rule-index.ts). The same object every time: explanations are read-only.
 */
export function firstConditionFalse(rule: CompiledRule): Explanation {
  let explanation = firstFalse.get(rule);
  if (explanation === undefined) {
    explanation = Object.freeze({
      ruleId: rule.id,
      revision: rule.revision,
      pos: rule.pos,
      triggerMatched: true,
      mismatch: null,
      conditions: outcomeListsOf(rule).falseAt[0]!,
      fired: false,
      intents: 0,
      error: null,
      contractId: null,
    });
    firstFalse.set(rule, explanation);
  }
  return explanation;
}

/**
 * A rule's `when` outcomes as frozen lists, made once per rule: every condition true, or the
 * first `i` true and condition `i` false (or failed) with the rest skipped. Outcomes depend on
 * where evaluation stopped only, so evaluations share these lists instead of making their own.
 */
type OutcomeLists = {
  readonly allTrue: readonly ConditionOutcome[];
  readonly falseAt: readonly (readonly ConditionOutcome[])[];
  readonly errorAt: readonly (readonly ConditionOutcome[])[];
};

const outcomeLists = new WeakMap<CompiledRule, OutcomeLists>();

function outcomeListsOf(rule: CompiledRule): OutcomeLists {
  let lists = outcomeLists.get(rule);
  if (lists === undefined) {
    const stopAt = (at: number, result: 'false' | 'error'): readonly ConditionOutcome[] =>
      Object.freeze(
        rule.when.map((c, i) =>
          Object.freeze(outcome(c, i < at ? 'true' : i === at ? result : 'skipped')),
        ),
      );
    lists = {
      allTrue: stopAt(rule.when.length, 'false'),
      falseAt: rule.when.map((_, i) => stopAt(i, 'false')),
      errorAt: rule.when.map((_, i) => stopAt(i, 'error')),
    };
    outcomeLists.set(rule, lists);
  }
  return lists;
}

/** Per rule, by the conditions list it stopped with: the result of an event rule not fired. */
const notFired = new WeakMap<CompiledRule, Map<readonly ConditionOutcome[], FireResult>>();

function notFiredResult(rule: CompiledRule, conditions: readonly ConditionOutcome[]): FireResult {
  let byConditions = notFired.get(rule);
  if (byConditions === undefined) {
    byConditions = new Map();
    notFired.set(rule, byConditions);
  }
  let result = byConditions.get(conditions);
  if (result === undefined) {
    result = Object.freeze({
      explanation: Object.freeze({
        ruleId: rule.id,
        revision: rule.revision,
        pos: rule.pos,
        triggerMatched: true,
        mismatch: null,
        conditions,
        fired: false,
        intents: 0,
        error: null,
        contractId: null,
      }),
      intents: NO_ACTIONS.intents,
      conditionFalse: true,
    });
    byConditions.set(conditions, result);
  }
  return result;
}

/** The outcome of a rule's `when` for one input. */
export type ConditionsResult = {
  readonly conditions: readonly ConditionOutcome[];
  /** Every condition gave true (also when there are none). */
  readonly holds: boolean;
  readonly error: RuleEvaluationError | null;
};

/** Each `when` condition in order, stopping at the first that is false or fails. */
export function checkConditions(
  rule: CompiledRule,
  variables: Readonly<Record<string, unknown>>,
): ConditionsResult {
  const when = rule.when;
  for (let i = 0; i < when.length; i++) {
    const condition = when[i]!;
    let value: unknown;
    try {
      value = condition.program.evaluate(variables);
    } catch (thrown) {
      const error = ruleError(
        rule,
        'CEL_EVALUATION_ERROR',
        errorSummary(thrown),
        condition.source,
        {
          pos: condition.pos,
          phase: 'when',
          actionIndex: null,
        },
      );
      return { conditions: outcomeListsOf(rule).errorAt[i]!, holds: false, error };
    }
    if (typeof value !== 'boolean') {
      const error = ruleError(
        rule,
        'NOT_A_BOOLEAN',
        `a condition must give true or false, this one gave ${describeValue(value)}`,
        condition.source,
        { pos: condition.pos, phase: 'when', actionIndex: null },
      );
      return { conditions: outcomeListsOf(rule).errorAt[i]!, holds: false, error };
    }
    if (!value) return { conditions: outcomeListsOf(rule).falseAt[i]!, holds: false, error: null };
  }
  return { conditions: outcomeListsOf(rule).allTrue, holds: true, error: null };
}

/**
 * Every action of the rule as an intent, or none and the error when one cannot be rendered
 * (a rule fires all of its actions or none).
 */
export function renderActions(
  rule: CompiledRule,
  firing: Firing,
): { readonly intents: readonly Intent[]; readonly error: RuleEvaluationError | null } {
  const intents: Intent[] = [];
  for (const action of rule.then) {
    try {
      intents.push(buildIntent(rule, action, firing));
    } catch (thrown) {
      const problem =
        thrown instanceof ActionProblem
          ? thrown
          : thrown instanceof RenderFailure
            ? new ActionProblem(
                thrown.expression === null ? 'BAD_VALUE' : 'CEL_EVALUATION_ERROR',
                thrown.message,
                thrown.expression,
                thrown.pos,
              )
            : new ActionProblem('CEL_EVALUATION_ERROR', errorSummary(thrown), null, action.pos);
      const error = ruleError(rule, problem.problem, problem.message, problem.expression, {
        pos: problem.pos,
        phase: 'then',
        actionIndex: action.index,
      });
      return { intents: [], error };
    }
  }
  return { intents, error: null };
}

function outcome(
  condition: CompiledRule['when'][number],
  result: ConditionOutcome['outcome'],
): ConditionOutcome {
  return { index: condition.index, source: condition.source, pos: condition.pos, outcome: result };
}

/** A rule error of `rule` at `where`. */
export function ruleError(
  rule: CompiledRule,
  code: RuleEvaluationErrorCode,
  message: string,
  expression: string | null,
  where: Pick<RuleEvaluationError, 'pos' | 'phase' | 'actionIndex'>,
): RuleEvaluationError {
  return { ruleId: rule.id, revision: rule.revision, code, message, expression, ...where };
}
