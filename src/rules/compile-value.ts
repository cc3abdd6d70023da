import { isScalar } from 'yaml';
import type { YamlPath } from '../core/yaml-locator.js';
import type { RuleKind, Variables } from './cel-hint.js';
import type { CompiledExpression, CompiledValue, JsonValue } from './compiled-rule.js';
import { numberText, yamlNumberText } from './daml-number-text.js';
import { isRecord } from './is-record.js';
import type { RuleScope } from './rule-scope.js';
import { hasTemplate, splitTemplate } from './split-template.js';

/** The action fields that hold Daml values, where numbers are sent as text. */
const DAML_VALUE_FIELDS: ReadonlySet<string> = new Set([
  'createArguments',
  'choiceArgument',
  'contractKey',
]);

/**
 * A value of an action (arguments, contract id, workflow id, ...): literal where it can be, else
 * a tree of `${{ }}` expressions, interpolations, lists and records to evaluate per event.
 */
export function compileValue(
  scope: RuleScope,
  raw: unknown,
  path: YamlPath,
  variables: Variables,
  kind: RuleKind,
): CompiledValue | null {
  if (typeof raw === 'string') {
    if (!hasTemplate(raw)) return { kind: 'literal', value: raw };
    const pieces = splitTemplate(raw);
    if (!Array.isArray(pieces)) {
      scope.error(
        scope.at.valuePos(path, pieces.offset),
        'BAD_TEMPLATE',
        pieces.problem,
        'write "${{ expression }}", e.g. "${{ event.contractId }}"',
      );
      return null;
    }
    const parts: (string | CompiledExpression)[] = [];
    for (const piece of pieces) {
      if (piece.kind === 'text') {
        parts.push(piece.text);
        continue;
      }
      const expression = scope.expression(piece.source, path, piece.offset, variables, kind);
      if (expression === null) return null;
      parts.push(expression);
    }
    const only = parts[0];
    if (parts.length === 1 && only !== undefined && typeof only !== 'string') {
      return { kind: 'expression', expression: only };
    }
    if (parts.every((p) => typeof p === 'string'))
      return { kind: 'literal', value: parts.join('') };
    return { kind: 'interpolation', parts, pos: scope.at.pos(path) };
  }
  if (Array.isArray(raw)) {
    const items = raw.map((x: unknown, i) => compileValue(scope, x, [...path, i], variables, kind));
    if (items.some((x) => x === null)) return null;
    const compiled = items as CompiledValue[];
    if (compiled.every((x) => x.kind === 'literal')) {
      return { kind: 'literal', value: compiled.map((x) => (x as { value: JsonValue }).value) };
    }
    return { kind: 'list', items: compiled, pos: scope.at.pos(path) };
  }
  if (isRecord(raw)) {
    const fields: { name: string; value: CompiledValue }[] = [];
    let ok = true;
    for (const [name, v] of Object.entries(raw)) {
      const value = compileValue(scope, v, [...path, name], variables, kind);
      if (value === null) ok = false;
      else fields.push({ name, value });
    }
    if (!ok) return null;
    if (fields.every((f) => f.value.kind === 'literal')) {
      return {
        kind: 'literal',
        value: Object.fromEntries(
          fields.map((f) => [f.name, (f.value as { value: JsonValue }).value]),
        ),
      };
    }
    return { kind: 'record', fields, pos: scope.at.pos(path) };
  }
  if (raw === undefined) return { kind: 'literal', value: null };
  // path: rules, i, then, j, <command>, <field>, ...: only Daml values take numbers as text.
  if (typeof raw === 'number' && DAML_VALUE_FIELDS.has(String(path[5]))) {
    return compileNumber(scope, raw, path);
  }
  return { kind: 'literal', value: raw as JsonValue };
}

/** A number in a command value: its exact text, as written (see daml-number-text.ts). */
function compileNumber(scope: RuleScope, raw: number, path: YamlPath): CompiledValue | null {
  const node = scope.at.node(path);
  const source = isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
  const text = (source === undefined ? null : yamlNumberText(source)) ?? numberText(raw);
  if (text !== null) return { kind: 'literal', value: text };
  scope.error(
    scope.at.pos(path),
    'BAD_VALUE',
    `${String(raw)} is not a number a Daml value can hold`,
    'Int64 and Numeric values are finite: write the number, e.g. 100 or 99.5',
  );
  return null;
}
