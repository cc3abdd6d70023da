import type { RuleKind, Variables } from './cel-hint.js';
import type { CompiledAction, CompiledValue } from './compiled-rule.js';
import { compileValue } from './compile-value.js';
import type { YamlPath } from '../core/yaml-locator.js';
import type { DamlType } from '../daml-lf/daml-type.js';
import { checkChoice, commandValueType, resolveRef, type ResolvedRef } from './catalogue-refs.js';
import { checkCommandValue } from './check-command-value.js';
import { withDamlRendering } from './daml-rendering.js';
import { isRecord } from './is-record.js';
import type { RuleScope } from './rule-scope.js';
import { COMMAND_KINDS } from './rule-language.js';

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
  const resolved = actionRef(scope, kind, body, bodyPath);
  const template = resolved?.ref ?? null;
  const value = (field: string): CompiledValue | null => {
    const compiled = compileValue(
      scope,
      body[field] ?? (field === 'choiceArgument' ? {} : undefined),
      [...bodyPath, field],
      variables,
      ruleKind,
    );
    const type = resolved === null ? null : argumentType(resolved, field, body.choice);
    const catalogue = scope.file.packages;
    if (compiled !== null && type !== null && catalogue !== undefined) {
      // A choiceArgument left out is `{}` (the schema's default): report its fields at the choice.
      const written = scope.at.node([...bodyPath, field]) !== undefined;
      const at = written ? [...bodyPath, field] : [...bodyPath, 'choice'];
      checkCommandValue(scope, catalogue, compiled, at, type);
      return withDamlRendering(catalogue, compiled, type);
    }
    return compiled;
  };
  if (resolved !== null && typeof body.choice === 'string') {
    checkChoice(scope, resolved, body.choice, [...bodyPath, 'choice']);
  }
  if (resolved !== null && kind === 'exerciseByKey') {
    const entries = resolved.entries;
    if (
      entries.length > 0 &&
      entries.every((e) => e.kind === 'template' && e.template.key === null)
    ) {
      scope.error(
        scope.at.pos([...bodyPath, 'template']),
        'UNKNOWN_TEMPLATE',
        `template ${resolved.ref.qualifiedName} has no contract key, so exerciseByKey cannot find its contracts`,
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
      if (resolved === null || contractId === null || choiceArgument === null) return null;
      return {
        ...common,
        kind,
        template: resolved.ref,
        refKind: resolved.refKind,
        contractId,
        choice,
        choiceArgument,
      };
    }
    case 'exerciseByKey': {
      const contractKey = value('contractKey');
      const choiceArgument = value('choiceArgument');
      if (template === null || contractKey === null || choiceArgument === null) return null;
      return { ...common, kind, template, contractKey, choice, choiceArgument };
    }
  }
}

/**
 * The command's template, or for `exercise` its interface (`interface:`). The other commands
 * need a template: `interface:` there is an error that says why.
 */
function actionRef(
  scope: RuleScope,
  kind: (typeof COMMAND_KINDS)[number],
  body: Record<string, unknown>,
  bodyPath: YamlPath,
): ResolvedRef | null {
  if (body.interface !== undefined && body.template !== undefined) return null; // the schema's
  if (body.interface !== undefined && kind !== 'exercise') {
    scope.error(
      scope.at.pos([...bodyPath, 'interface'], { key: true }),
      'REF_KIND',
      kind === 'exerciseByKey'
        ? 'exerciseByKey needs a template: an interface has no contract key'
        : `${kind} creates a contract, which needs a template: an interface has no contracts of its own`,
      kind === 'exerciseByKey'
        ? 'to exercise an interface choice, use `exercise: { interface: …, contractId: …, choice: … }`'
        : 'write `template:` with a template that implements the interface',
    );
    return null;
  }
  const written = body.interface !== undefined ? 'interface' : 'template';
  return resolveRef(scope, body[written], [...bodyPath, written], written, kind);
}

/** The Daml type of a command's value field, from the newest package version the catalogue has. */
function argumentType(resolved: ResolvedRef, field: string, choice: unknown): DamlType | null {
  const entry = resolved.entries[0];
  return entry === undefined ? null : commandValueType(entry, field, choice);
}
