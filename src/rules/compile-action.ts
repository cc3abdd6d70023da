import type { RuleKind, Variables } from './cel-hint.js';
import type { CompiledAction, CompiledValue } from './compiled-rule.js';
import { compileValue } from './compile-value.js';
import { isRecord } from './is-record.js';
import type { RuleScope } from './rule-scope.js';
import { COMMAND_KINDS } from './rules-schema.js';

/** One action of `then:`: its command, template, choice and values, and who submits it. */
export function compileAction(
  scope: RuleScope,
  raw: unknown,
  index: number,
  variables: Variables,
  ruleKind: RuleKind,
): CompiledAction | null {
  if (!isRecord(raw)) return null;
  const path = scope.p('then', index);
  const kinds = COMMAND_KINDS.filter((k) => raw[k] !== undefined);
  const kind = kinds[0];
  const actAs = scope.aliases(raw.actAs, [...path, 'actAs']);
  const readAs = raw.readAs === undefined ? [] : scope.aliases(raw.readAs, [...path, 'readAs']);
  const workflowId =
    raw.workflowId === undefined
      ? null
      : compileValue(scope, raw.workflowId, [...path, 'workflowId'], variables, ruleKind);
  const disclosedContracts =
    raw.disclosedContracts === undefined
      ? null
      : compileValue(
          scope,
          raw.disclosedContracts,
          [...path, 'disclosedContracts'],
          variables,
          ruleKind,
        );
  if (kinds.length !== 1 || kind === undefined) return null;
  const body = raw[kind];
  if (!isRecord(body)) return null;
  const bodyPath = [...path, kind];
  const template = scope.templateRef(body.template, [...bodyPath, 'template']);
  const value = (field: string): CompiledValue | null =>
    compileValue(
      scope,
      body[field] ?? (field === 'choiceArgument' ? {} : undefined),
      [...bodyPath, field],
      variables,
      ruleKind,
    );
  if (template !== null && typeof body.choice === 'string') {
    scope.checkChoice(template, body.choice, [...bodyPath, 'choice']);
  }
  if (template !== null && kind === 'exerciseByKey') {
    const entries = scope.catalogueEntries(template);
    if (
      entries.length > 0 &&
      entries.every((e) => e.kind === 'template' && e.template.key === null)
    ) {
      scope.error(
        scope.at.pos([...bodyPath, 'template']),
        'UNKNOWN_TEMPLATE',
        `template ${template.qualifiedName} has no contract key, so exerciseByKey cannot find its contracts`,
        'use `exercise` with a contractId instead',
      );
    }
  }
  const common = {
    index,
    actAs: actAs ?? [],
    readAs: readAs ?? [],
    workflowId,
    disclosedContracts,
    pos: scope.at.pos(path),
  };
  const choice = typeof body.choice === 'string' ? body.choice : '';
  switch (kind) {
    case 'create': {
      const createArguments = value('createArguments');
      if (template === null || createArguments === null) return null;
      return { ...common, kind, template, createArguments };
    }
    case 'createAndExercise': {
      const createArguments = value('createArguments');
      const choiceArgument = value('choiceArgument');
      if (template === null || createArguments === null || choiceArgument === null) return null;
      return { ...common, kind, template, createArguments, choice, choiceArgument };
    }
    case 'exercise': {
      const contractId = value('contractId');
      const choiceArgument = value('choiceArgument');
      if (template === null || contractId === null || choiceArgument === null) return null;
      return { ...common, kind, template, contractId, choice, choiceArgument };
    }
    case 'exerciseByKey': {
      const contractKey = value('contractKey');
      const choiceArgument = value('choiceArgument');
      if (template === null || contractKey === null || choiceArgument === null) return null;
      return { ...common, kind, template, contractKey, choice, choiceArgument };
    }
  }
}
