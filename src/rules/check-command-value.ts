import { isScalar } from 'yaml';
import { closestMatch } from '../core/source/closest-match.js';
import type { YamlPath } from '../core/yaml-locator.js';
import { showType, type DamlType } from '../daml-lf/daml-type.js';
import type { PackageCatalogue, ResolvedType } from '../daml-lf/package-catalogue.js';
import type { CompiledExpression, CompiledValue, JsonValue } from './compiled-rule.js';
import { literalProblem } from './daml-literals.js';
import { expected, expressionValueProblem } from './expression-value-type.js';
import { operandType, type OperandType } from './expression-types.js';
import type { RuleScope } from './rule-scope.js';

/**
 * A command's Daml value (createArguments, choiceArgument, contractKey) checked against its Daml
 * type before the rule runs, each problem at its place in the file: a record's unknown fields
 * (UNKNOWN_FIELD, with a did-you-mean) and missing ones (MISSING_FIELD; an Optional may be left
 * out, a nested Optional may not), a value of the wrong shape (BAD_ARGUMENT: a list for a record,
 * text for a Bool, an enum constructor it does not have, a variant that is not `{tag, value}`, a
 * nested Optional that is not a list), scalars in the wrong format (BAD_LITERAL: see
 * daml-literals.ts), and `${{ }}` values whose CEL type cannot be the field's (TYPE_MISMATCH, as
 * far as the type is known). The wire form is NOTES.md §0.12 and its Corrections.
 */

type Node = { readonly compiled: CompiledValue } | { readonly json: JsonValue };

type Ctx = {
  readonly scope: RuleScope;
  readonly catalogue: PackageCatalogue;
};

/** Checks `value` (the compiled value at `path`) against `type`. */
export function checkCommandValue(
  scope: RuleScope,
  catalogue: PackageCatalogue,
  value: CompiledValue,
  path: YamlPath,
  type: DamlType,
): void {
  check({ scope, catalogue }, { compiled: value }, type, path);
}

function jsonOf(node: Node): JsonValue | undefined {
  if ('json' in node) return node.json;
  return node.compiled.kind === 'literal' ? node.compiled.value : undefined;
}

/** What a value written in the file is, for messages. */
function got(ctx: Ctx, node: Node, path: YamlPath): string {
  const yaml = ctx.scope.at.node(path);
  if (isScalar(yaml) && typeof yaml.value === 'number') return `the number ${String(yaml.value)}`;
  if ('compiled' in node && node.compiled.kind === 'list') return 'a list';
  if ('compiled' in node && node.compiled.kind === 'record') return 'a mapping';
  const json = jsonOf(node);
  if (json === null) return 'null';
  if (Array.isArray(json)) return 'a list';
  if (typeof json === 'object') return 'a mapping';
  if (typeof json === 'string')
    return `the text "${json.length > 40 ? `${json.slice(0, 40)}…` : json}"`;
  return String(json);
}

function report(
  ctx: Ctx,
  path: YamlPath,
  code: 'BAD_ARGUMENT' | 'BAD_LITERAL' | 'TYPE_MISMATCH' | 'MISSING_FIELD' | 'UNKNOWN_FIELD',
  message: string,
  hint?: string,
  key = false,
): void {
  ctx.scope.error(ctx.scope.at.pos(path, { key }), code, message, hint);
}

function check(ctx: Ctx, node: Node, type: DamlType, path: YamlPath): void {
  const resolved = ctx.catalogue.resolve(type);
  if ('compiled' in node) {
    const c = node.compiled;
    if (c.kind === 'expression') return checkExpression(ctx, c.expression, resolved, type, path);
    if (c.kind === 'interpolation') {
      return checkExpressionType(ctx, { cel: 'string', nullable: false }, resolved, type, path);
    }
  }
  const wrong = (): void =>
    report(
      ctx,
      path,
      'BAD_ARGUMENT',
      `expected ${expected(resolved, type)}, got ${got(ctx, node, path)}`,
    );
  const json = jsonOf(node);
  switch (resolved.kind) {
    case 'Optional': {
      if (resolved.of.kind === 'Optional') return nestedOptional(ctx, node, resolved, type, path);
      if (json === null) return;
      return check(ctx, node, resolved.of, path);
    }
    case 'Record':
      return checkRecord(ctx, node, resolved, type, path);
    case 'Variant': {
      const fields = fieldsOf(node);
      const tag = fields?.get('tag');
      const tagText = tag === undefined ? undefined : jsonOf(tag);
      if (fields === null || tag === undefined || !fields.has('value') || fields.size !== 2) {
        return report(
          ctx,
          path,
          'BAD_ARGUMENT',
          `expected ${expected(resolved, type)}, got ${got(ctx, node, path)}`,
          `write {tag: ${resolved.constructors[0]?.name ?? 'Ctor'}, value: …}`,
        );
      }
      if (typeof tagText !== 'string') return; // computed: known at run time
      const ctor = resolved.constructors.find((c) => c.name === tagText);
      if (ctor === undefined) {
        const guess = closestMatch(
          tagText,
          resolved.constructors.map((c) => c.name),
        );
        return report(
          ctx,
          [...path, 'tag'],
          'BAD_ARGUMENT',
          `${showType(type)} has no constructor "${tagText}"`,
          guess !== undefined
            ? `did you mean "${guess}"?`
            : `its constructors: ${resolved.constructors.map((c) => c.name).join(', ')}`,
        );
      }
      return check(ctx, fields.get('value')!, ctor.type, [...path, 'value']);
    }
    case 'Enum': {
      if (typeof json !== 'string') return wrong();
      if (resolved.constructors.includes(json)) return;
      const guess = closestMatch(json, resolved.constructors);
      return report(
        ctx,
        path,
        'BAD_ARGUMENT',
        `${showType(type)} has no constructor "${json}"`,
        guess !== undefined
          ? `did you mean "${guess}"?`
          : `its constructors: ${resolved.constructors.join(', ')}`,
      );
    }
    case 'List':
    case 'GenMap': {
      const items = itemsOf(node);
      if (items === null) return wrong();
      items.forEach((item, i) => {
        if (resolved.kind === 'List') return check(ctx, item, resolved.of, [...path, i]);
        const pair = itemsOf(item);
        if (pair === null || pair.length !== 2) {
          return report(
            ctx,
            [...path, i],
            'BAD_ARGUMENT',
            `an entry of a Map is a [key, value] pair, got ${got(ctx, item, [...path, i])}`,
          );
        }
        check(ctx, pair[0]!, resolved.key, [...path, i, 0]);
        check(ctx, pair[1]!, resolved.value, [...path, i, 1]);
      });
      return;
    }
    case 'TextMap': {
      const fields = fieldsOf(node);
      if (fields === null) return wrong();
      for (const [k, v] of fields) check(ctx, v, resolved.of, [...path, k]);
      return;
    }
    case 'Unit': {
      const fields = fieldsOf(node);
      if (fields === null || fields.size > 0) return wrong();
      return;
    }
    case 'Bool':
      if (typeof json !== 'boolean') return wrong();
      return;
    case 'Party':
    case 'Text':
    case 'ContractId':
    case 'Int64':
    case 'Numeric':
    case 'Date':
    case 'Timestamp': {
      if (typeof json !== 'string') return wrong();
      // A YAML number is sent as its text: right for Text and numbers only.
      const yaml = ctx.scope.at.node(path);
      const number = isScalar(yaml) && typeof yaml.value === 'number';
      if (number && !['Text', 'Int64', 'Numeric'].includes(resolved.kind)) return wrong();
      if (resolved.kind === 'Party' && ctx.scope.file.parties?.has(json) === true) {
        return report(
          ctx,
          path,
          'BAD_LITERAL',
          `"${json}" is a party alias; a command needs the party's id`,
          `write '\${{ parties.${json} }}'`,
        );
      }
      const problem = literalProblem(resolved, type, json);
      if (problem !== null) report(ctx, path, 'BAD_LITERAL', problem.message, problem.hint);
      return;
    }
    default:
      return; // a data type the catalogue does not have, a type variable, …
  }
}

/** The fields of a record-like node (a mapping); null when it is not one. */
function fieldsOf(node: Node): Map<string, Node> | null {
  if ('compiled' in node && node.compiled.kind === 'record') {
    return new Map(node.compiled.fields.map((f) => [f.name, { compiled: f.value }]));
  }
  const json = jsonOf(node);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return null;
  return new Map(Object.entries(json).map(([k, v]) => [k, { json: v }]));
}

function itemsOf(node: Node): Node[] | null {
  if ('compiled' in node && node.compiled.kind === 'list') {
    return node.compiled.items.map((compiled) => ({ compiled }));
  }
  const json = jsonOf(node);
  return Array.isArray(json) ? (json as JsonValue[]).map((j) => ({ json: j })) : null;
}

function checkRecord(
  ctx: Ctx,
  node: Node,
  resolved: Extract<ResolvedType, { kind: 'Record' }>,
  type: DamlType,
  path: YamlPath,
): void {
  const fields = fieldsOf(node);
  if (fields === null) {
    report(
      ctx,
      path,
      'BAD_ARGUMENT',
      `expected ${expected(resolved, type)}, got ${got(ctx, node, path)}`,
    );
    return;
  }
  const names = resolved.fields.map((f) => f.name);
  for (const [name, value] of fields) {
    const field = resolved.fields.find((f) => f.name === name);
    if (field === undefined) {
      const guess = closestMatch(name, names);
      report(
        ctx,
        [...path, name],
        'UNKNOWN_FIELD',
        `${showType(type)} has no field "${name}"`,
        guess !== undefined
          ? `did you mean "${guess}"?`
          : names.length === 0
            ? 'it has no fields'
            : `its fields: ${names.join(', ')}`,
        true,
      );
      continue;
    }
    check(ctx, value, field.type, [...path, name]);
  }
  const missing = resolved.fields.filter((f) => {
    if (fields.has(f.name)) return false;
    const t = ctx.catalogue.resolve(f.type);
    return t.kind !== 'Optional' || t.of.kind === 'Optional';
  });
  if (missing.length > 0) {
    report(
      ctx,
      path,
      'MISSING_FIELD',
      `${showType(type)} needs ${missing.map((f) => `"${f.name}" (${showType(f.type)})`).join(', ')}`,
      'only Optional fields may be left out (they are None); a nested Optional is written [] for None',
    );
  }
}

/** `Optional (Optional a)`: a list of zero or one item at every level (Canton's JSON). */
function nestedOptional(
  ctx: Ctx,
  node: Node,
  resolved: Extract<ResolvedType, { kind: 'Optional' }>,
  type: DamlType,
  path: YamlPath,
): void {
  const items = itemsOf(node);
  if (items === null || items.length > 1) {
    report(
      ctx,
      path,
      'BAD_ARGUMENT',
      `expected ${expected(resolved, type)}, got ${got(ctx, node, path)}`,
      'a nested Optional is a list at every level: None is [], Some None [[]], Some (Some x) [[x]]; null is not accepted',
    );
    return;
  }
  const inner = items[0];
  if (inner === undefined) return;
  // Below a nested Optional, every Optional level is a list too: Some (Some x) is [[x]].
  const of = ctx.catalogue.resolve(resolved.of);
  if (of.kind === 'Optional') nestedOptional(ctx, inner, of, resolved.of, [...path, 0]);
  else check(ctx, inner, resolved.of, [...path, 0]);
}

function checkExpression(
  ctx: Ctx,
  expression: CompiledExpression,
  resolved: ResolvedType,
  type: DamlType,
  path: YamlPath,
): void {
  const known = operandType(expression.program.result, ctx.scope.valueTypes);
  if (known !== null) checkExpressionType(ctx, known, resolved, type, path);
}

function checkExpressionType(
  ctx: Ctx,
  t: OperandType,
  resolved: ResolvedType,
  type: DamlType,
  path: YamlPath,
): void {
  const problem = expressionValueProblem(ctx.catalogue, t, resolved, type);
  if (problem !== null) report(ctx, path, 'TYPE_MISMATCH', problem.message, problem.hint);
}
