import type { YamlPath } from '../core/yaml-locator.js';
import type { RuleKind, Variables } from './cel-hint.js';
import { compileAction } from './compile-action.js';
import { compileRuleOptions } from './compile-rule-options.js';
import { compileTrigger } from './compile-trigger.js';
import {
  BATCH_RULE_VARIABLES,
  EVENT_RULE_VARIABLES,
  SCHEDULE_RULE_VARIABLES,
  SLOT_RULE_VARIABLES,
  type CompiledAction,
  type CompiledCondition,
  type CompiledRule,
} from './compiled-rule.js';
import { fieldTrieOf } from './field-reads.js';
import { isRecord } from './is-record.js';
import type { RuleScope } from './rule-scope.js';
import { hasTemplate } from './split-template.js';

const VARIABLES: Readonly<Record<RuleKind, Variables>> = {
  event: EVENT_RULE_VARIABLES,
  schedule: SCHEDULE_RULE_VARIABLES,
  slot: SLOT_RULE_VARIABLES,
  batch: BATCH_RULE_VARIABLES,
};

/**
 * Compiles one schema-checked rule: its trigger, conditions, actions and options. Defensive: a
 * field the schema rejected is skipped silently (the schema's problem is already reported).
 * Null when the rule has an error.
 */
export function compileRule(scope: RuleScope): CompiledRule | null {
  const raw = scope.raw;
  const trigger = compileTrigger(scope);
  // From the raw shape, so expressions are checked even when the trigger has errors.
  const kind: RuleKind = isRecord(raw.on)
    ? 'event'
    : isRecord(raw.forEach)
      ? 'schedule'
      : isRecord(raw.schedule)
        ? 'slot'
        : 'event';
  const variables: Variables = VARIABLES[kind];
  const when = compileWhen(scope, variables, kind);
  // A batch rule's `when` selects one contract at a time; its `then` sees the batch.
  const thenKind: RuleKind =
    kind === 'schedule' && isRecord(raw.forEach) && isRecord(raw.forEach.batch) ? 'batch' : kind;
  const thenVariables = VARIABLES[thenKind];
  const then = Array.isArray(raw.then)
    ? raw.then.map((a: unknown, i) => compileAction(scope, a, i, thenVariables, thenKind))
    : [];
  const options = compileRuleOptions(scope);
  if (!scope.ok || trigger === null || when === null || options === null) return null;
  if (then.length === 0 || then.some((a) => a === null)) return null;
  return {
    id: raw.id as string,
    revision: typeof raw.revision === 'number' ? raw.revision : 1,
    description: typeof raw.description === 'string' ? raw.description : '',
    enabled: raw.enabled !== false,
    labels: isRecord(raw.labels) ? (raw.labels as Record<string, string>) : {},
    trigger,
    when,
    then: then as CompiledAction[],
    options,
    pos: scope.at.pos(scope.path),
    fieldReads: fieldTrieOf(scope.reads, kind === 'event' ? 'event' : 'contract'),
  };
}

function compileWhen(
  scope: RuleScope,
  variables: Variables,
  kind: RuleKind,
): CompiledCondition[] | null {
  const raw = scope.raw.when;
  if (raw === undefined) return [];
  const sources: { text: string; path: YamlPath }[] =
    typeof raw === 'string'
      ? [{ text: raw, path: scope.p('when') }]
      : Array.isArray(raw)
        ? raw.map((text: unknown, i) => ({ text: String(text), path: scope.p('when', i) }))
        : [];
  const out: CompiledCondition[] = [];
  for (const [index, { text, path }] of sources.entries()) {
    if (hasTemplate(text)) continue; // reported as TEMPLATE_NOT_ALLOWED
    const expression = scope.expression(text, path, 0, variables, kind);
    if (expression !== null) out.push({ ...expression, index });
  }
  return out.length === sources.length ? out : null;
}
