import type { TriggerKey } from '../core/trigger-key.js';
import type { Command, DisclosedContract } from '../ledger/wire/wire-types.js';
import { ActionProblem, describeValue } from './action-problem.js';
import { commandIdFor } from './command-id.js';
import type { CompiledAction, CompiledRule, JsonValue, SourcePos } from './compiled-rule.js';
import type { Intent } from './evaluation-result.js';
import { renderValue } from './render-value.js';

/** What an action's intent is built from (a `Firing` without its contract). */
export type IntentInputs = {
  /** The CEL variables (event or contract, parties, rule, now, today). */
  readonly variables: Readonly<Record<string, unknown>>;
  readonly parties: Readonly<Record<string, string>>;
  readonly triggerKey: TriggerKey;
  readonly offset: number;
};

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

/**
 * The intent of one action of a rule that fires: its command rendered from the CEL variables, its
 * parties resolved and its deterministic commandId. Throws ActionProblem when the action cannot
 * become a command (fireRule turns that into the rule's error, and the rule fires nothing).
 */
export function buildIntent(
  rule: CompiledRule,
  action: CompiledAction,
  firing: IntentInputs,
): Intent {
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
