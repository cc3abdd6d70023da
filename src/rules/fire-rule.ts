import { LedgerbotError } from '../core/ledgerbot-error.js';
import type { TriggerKey } from '../core/trigger-key.js';
import type { Command, DisclosedContract } from '../ledger/wire/wire-types.js';
import { commandIdFor } from './command-id.js';
import type { CompiledAction, CompiledRule, JsonValue, SourcePos } from './compiled-rule.js';
import type {
  ConditionOutcome,
  Explanation,
  Intent,
  RuleEvaluationError,
  RuleEvaluationErrorCode,
} from './evaluation-result.js';
import { errorSummary, RenderFailure, renderValue } from './render-value.js';

/** What a matched trigger hands to the rule's conditions and actions. */
export type Firing = {
  /** The CEL variables (event or contract, parties, rule, now, today). */
  readonly variables: Readonly<Record<string, unknown>>;
  readonly parties: Readonly<Record<string, string>>;
  readonly triggerKey: TriggerKey;
  readonly offset: number;
  readonly contractId: string | null;
};

export type FireResult = {
  readonly explanation: Explanation;
  readonly intents: readonly Intent[];
};

/** Internal: an action that cannot become a command; caught in fireRule. */
class ActionProblem extends LedgerbotError {
  readonly problem: RuleEvaluationErrorCode;
  readonly expression: string | null;
  readonly pos: SourcePos;

  constructor(
    problem: RuleEvaluationErrorCode,
    message: string,
    expression: string | null,
    pos: SourcePos,
  ) {
    super(problem, message);
    this.problem = problem;
    this.expression = expression;
    this.pos = pos;
  }
}

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

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string')
    return `the text "${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'bigint' || typeof value === 'number') return `the number ${value}`;
  return `a ${typeof value === 'object' ? (value.constructor?.name ?? 'value') : typeof value}`;
}

function resolveParties(
  aliases: readonly string[],
  parties: Readonly<Record<string, string>>,
  pos: SourcePos,
  field: string,
): string[] {
  return aliases.map((alias) => {
    const id = Object.hasOwn(parties, alias) ? parties[alias] : undefined;
    if (id === undefined) {
      throw new ActionProblem(
        'UNKNOWN_PARTY',
        `${field} names the party alias "${alias}", which the bot config does not define`,
        null,
        pos,
      );
    }
    return id;
  });
}

function text(value: JsonValue, what: string, pos: SourcePos): string {
  if (typeof value === 'string' && value !== '') return value;
  throw new ActionProblem(
    'BAD_VALUE',
    `${what} must be non-empty text, got ${describeValue(value)}`,
    null,
    pos,
  );
}

function buildIntent(rule: CompiledRule, action: CompiledAction, firing: Firing): Intent {
  const vars = firing.variables;
  const actAs = resolveParties(action.actAs, firing.parties, action.pos, 'actAs');
  const readAs = resolveParties(action.readAs, firing.parties, action.pos, 'readAs');
  const templateId = action.template.text;
  let command: Command;
  switch (action.kind) {
    case 'create':
      command = {
        CreateCommand: { templateId, createArguments: renderValue(action.createArguments, vars) },
      };
      break;
    case 'exercise':
      command = {
        ExerciseCommand: {
          templateId,
          contractId: text(renderValue(action.contractId, vars, 'keep'), 'contractId', action.pos),
          choice: action.choice,
          choiceArgument: renderValue(action.choiceArgument, vars),
        },
      };
      break;
    case 'exerciseByKey':
      command = {
        ExerciseByKeyCommand: {
          templateId,
          contractKey: renderValue(action.contractKey, vars),
          choice: action.choice,
          choiceArgument: renderValue(action.choiceArgument, vars),
        },
      };
      break;
    case 'createAndExercise':
      command = {
        CreateAndExerciseCommand: {
          templateId,
          createArguments: renderValue(action.createArguments, vars),
          choice: action.choice,
          choiceArgument: renderValue(action.choiceArgument, vars),
        },
      };
      break;
  }
  const workflowId =
    action.workflowId === null
      ? rule.id
      : text(renderValue(action.workflowId, vars, 'keep'), 'workflowId', action.pos);
  const disclosedContracts =
    action.disclosedContracts === null
      ? []
      : disclosed(renderValue(action.disclosedContracts, vars, 'keep'), action.pos);
  return {
    ruleId: rule.id,
    revision: rule.revision,
    actionIndex: action.index,
    commandId: commandIdFor({
      ruleId: rule.id,
      revision: rule.revision,
      actAs,
      triggerKey: firing.triggerKey,
      actionIndex: action.index,
    }),
    command,
    actAs,
    readAs,
    workflowId,
    disclosedContracts,
    triggerKey: firing.triggerKey,
    offset: firing.offset,
    options: rule.options,
    pos: action.pos,
  };
}

const DISCLOSED_FIELDS = new Set([
  'contractId',
  'templateId',
  'createdEventBlob',
  'synchronizerId',
]);

/** Checks the rendered `disclosedContracts` against the wire's DisclosedContract shape. */
function disclosed(value: JsonValue, pos: SourcePos): DisclosedContract[] {
  if (!Array.isArray(value)) {
    throw new ActionProblem(
      'BAD_VALUE',
      `disclosedContracts must be a list, got ${describeValue(value)}`,
      null,
      pos,
    );
  }
  return (value as readonly JsonValue[]).map((item, i) => {
    const where = `disclosedContracts[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new ActionProblem(
        'BAD_VALUE',
        `${where} must be a mapping with createdEventBlob (and contractId, templateId, synchronizerId)`,
        null,
        pos,
      );
    }
    const out: Record<string, string> = {};
    for (const [key, v] of Object.entries(item)) {
      if (!DISCLOSED_FIELDS.has(key)) {
        throw new ActionProblem(
          'BAD_VALUE',
          `${where} has the unknown field "${key}": use contractId, templateId, createdEventBlob and synchronizerId`,
          null,
          pos,
        );
      }
      if (v === null) continue;
      out[key] = text(v, `${where}.${key}`, pos);
    }
    if (out.createdEventBlob === undefined) {
      throw new ActionProblem(
        'BAD_VALUE',
        `${where} needs createdEventBlob (read it from the contract's createdEventBlob)`,
        null,
        pos,
      );
    }
    return out as DisclosedContract;
  });
}
