import { showType, type DamlType } from '../daml-lf/daml-type.js';
import type { PackageCatalogue, ResolvedType } from '../daml-lf/package-catalogue.js';
import type {
  Comparison,
  Guard,
  Operand,
  ReadPath,
  ReadSegment,
  StaticType,
} from './cel/read-paths.js';
import { subjectOf, type PathProblem } from './daml-path-types.js';
import {
  firstAtEachOffset,
  pathText,
  walkRead,
  type ValueRootTypes,
} from './unknown-field-reads.js';

/**
 * The types of what an expression compares and reads, where the catalogue knows them:
 * - TYPE_MISMATCH: a Daml value compared or computed with a value of another CEL type
 *   (`event.createArgument.due < decimal("3")`: a Date is text in CEL), which fails on every
 *   event (`==` is always false); and text comparisons that are wrong for numbers ("10" < "9");
 * - UNGUARDED_OPTIONAL / UNGUARDED_VARIANT (warnings): a read below an Optional that may be
 *   None, or below a variant's `value` whose constructor is not tested. A guard is a
 *   comparison of the Optional with null (`x != null && x.y …`) or of the variant's tag
 *   (`x.tag == "Ctor" && x.value.y …`), anywhere in the same expression or, for an action's
 *   `${{ }}`, in a `when` condition (`when` runs first); for a `when` condition, in it or an
 *   earlier one. `has()` is no guard: every field a rule reads is filled in (see field-reads.ts),
 *   so `has(x.y)` is true even when `x.y` is None.
 */

/** The CEL type of an operand and, for a Daml value, its Daml type. */
export type OperandType = {
  readonly cel: StaticType;
  /** The Daml type when the operand is a Daml value the catalogue knows. */
  readonly daml?: { readonly resolved: ResolvedType; readonly type: DamlType };
  /** An `Optional a` (not nested): null when None. */
  readonly nullable: boolean;
  /** The text of a text literal. */
  readonly text?: string;
};

/** The API fields of `event` / `contract` (not Daml values) whose CEL type is fixed. */
const EVENT_FIELD_TYPES: Readonly<Record<string, StaticType>> = {
  offset: 'int',
  nodeId: 'int',
  lastDescendantNodeId: 'int',
  recordTime: 'timestamp',
  effectiveAt: 'timestamp',
  createdAt: 'timestamp',
  contractId: 'string',
  templateId: 'string',
  packageName: 'string',
  choice: 'string',
  updateId: 'string',
  workflowId: 'string',
  interfaceId: 'string',
  consuming: 'bool',
  acsDelta: 'bool',
  signatories: 'list',
  observers: 'list',
  witnessParties: 'list',
  actingParties: 'list',
  interfaceViews: 'list',
  implementedInterfaces: 'list',
};

/** How a Daml value is seen in CEL; null for what cannot be said (a type variable, …). */
function celTypeOfDaml(
  catalogue: PackageCatalogue,
  resolved: ResolvedType,
): { cel: StaticType; nullable: boolean; inner: ResolvedType } | null {
  if (resolved.kind === 'Optional') {
    if (resolved.of.kind === 'Optional') return { cel: 'list', nullable: false, inner: resolved };
    const inner = celTypeOfDaml(catalogue, catalogue.resolve(resolved.of));
    return inner === null ? null : { ...inner, nullable: true };
  }
  switch (resolved.kind) {
    case 'Party':
    case 'Text':
    case 'Int64':
    case 'Numeric':
    case 'Date':
    case 'Timestamp':
    case 'ContractId':
    case 'Enum':
      return { cel: 'string', nullable: false, inner: resolved };
    case 'Bool':
      return { cel: 'bool', nullable: false, inner: resolved };
    case 'Record':
    case 'Variant':
    case 'TextMap':
    case 'Unit':
      return { cel: 'map', nullable: false, inner: resolved };
    case 'List':
    case 'GenMap':
      return { cel: 'list', nullable: false, inner: resolved };
    default:
      return null;
  }
}

/** The type of an operand; null when unknown. */
export function operandType(operand: Operand, known: ValueRootTypes | null): OperandType | null {
  if (operand.kind === 'static') {
    return {
      cel: operand.type,
      nullable: false,
      ...(operand.text === undefined ? {} : { text: operand.text }),
    };
  }
  if (operand.kind === 'unknown') return null;
  const path = operand.path;
  if (path.variable === 'parties' && path.segments.length === 1) {
    return { cel: 'string', nullable: false };
  }
  if ((path.variable === 'event' || path.variable === 'contract') && path.segments.length === 1) {
    const fixed = EVENT_FIELD_TYPES[path.segments[0]!.name];
    if (fixed !== undefined) return { cel: fixed, nullable: false };
  }
  if (known === null) return null;
  const leaves = walkRead(path, known)?.leaves;
  if (leaves === undefined || leaves === null || leaves.length === 0) return null;
  const types = leaves.map((l) => celTypeOfDaml(known.catalogue, l));
  const first = types[0];
  if (first === null || first === undefined || types.some((t) => t?.cel !== first.cel)) return null;
  const resolved = first.inner;
  return {
    cel: first.cel,
    nullable: types.some((t) => t?.nullable === true),
    daml: { resolved, type: damlTypeOf(resolved) },
  };
}

/** A resolved type back as a type, for messages (`Numeric 10`, `Date`, `Color`). */
function damlTypeOf(resolved: ResolvedType): DamlType {
  switch (resolved.kind) {
    case 'Record':
    case 'Variant':
    case 'Enum':
    case 'Interface':
    case 'Unknown':
      return { kind: 'Con', ref: resolved.ref, args: [] };
    default:
      return resolved;
  }
}

const ORDERING = new Set(['<', '<=', '>', '>=']);
const NUMBERS = new Set<StaticType>(['int', 'uint', 'double', 'Decimal']);

/** `a Decimal`, `a timestamp`, `text`, … for messages. */
function describe(t: OperandType): string {
  if (t.daml !== undefined)
    return `a Daml ${showType(t.daml.type)} (${t.cel === 'string' ? 'text' : t.cel})`;
  switch (t.cel) {
    case 'string':
      return 'text';
    case 'int':
    case 'uint':
      return 'a whole number';
    case 'double':
      return 'a number';
    case 'null':
      return 'null';
    default:
      return `a ${t.cel}`;
  }
}

/** The comparisons of one expression between values of types that cannot work together. */
export function comparisonProblems(
  comparisons: readonly Comparison[],
  known: ValueRootTypes,
): PathProblem[] {
  const out: PathProblem[] = [];
  for (const { op, left, right } of comparisons) {
    const a = operandType(left, known);
    const b = operandType(right, known);
    if (a === null || b === null) continue;
    const [path, p, q] =
      left.kind === 'path' && a.daml !== undefined
        ? [left.path, a, b]
        : right.kind === 'path' && b.daml !== undefined
          ? [right.path, b, a]
          : [null, a, b];
    if (path === null || p.daml === undefined) continue; // no Daml value the catalogue knows
    const problem = mismatch(op, p, q, path);
    if (problem !== null) out.push(problem);
  }
  return firstAtEachOffset(out);
}

function mismatch(op: string, p: OperandType, q: OperandType, path: ReadPath): PathProblem | null {
  const daml = p.daml!.resolved.kind;
  const numberText = daml === 'Numeric' || daml === 'Int64';
  const equality = op === '==' || op === '!=';
  if (q.cel === 'null') return null; // `x == null`: fine for an Optional, harmless otherwise
  // A number literal with a Numeric/Int64 is NUMERIC_AS_NUMBER's (numberTextOperands).
  if (numberText && (q.cel === 'int' || q.cel === 'double') && q.daml === undefined) return null;
  let wrong: string | null = null;
  if (p.cel === q.cel) {
    const qNumberText = q.daml?.resolved.kind === 'Numeric' || q.daml?.resolved.kind === 'Int64';
    if (p.cel === 'string' && (numberText || qNumberText) && !equality) {
      wrong = ORDERING.has(op)
        ? `so \`${op}\` compares it as text, not as a number ("10" < "9")`
        : `so \`${op}\` does not compute with it as a number`;
    }
  } else if (!(NUMBERS.has(p.cel) && NUMBERS.has(q.cel))) {
    wrong = equality
      ? `so \`${op}\` with ${describe(q)} is always ${op === '==' ? 'false' : 'true'}`
      : `so \`${op}\` with ${describe(q)} fails on every event ("no such overload")`;
  }
  if (
    wrong === null &&
    daml === 'Party' &&
    equality &&
    q.text !== undefined &&
    !q.text.includes('::')
  ) {
    // A party id is `name::fingerprint`: text without `::` never equals one.
    const alias = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(q.text) ? q.text : undefined;
    return {
      offset: path.segments[path.segments.length - 1]!.offset,
      message: `${subjectOf(path.segments, path.variable)} is a Daml Party, whose text is a party id ("Name::1220…"); "${q.text}" is not one, so \`${op}\` is always ${op === '==' ? 'false' : 'true'}`,
      hint:
        alias === undefined
          ? 'compare it with parties.<alias>, the party id of an alias of the config'
          : `compare it with parties.${alias} if "${alias}" is a party alias of the config`,
    };
  }
  if (wrong === null) return null;
  const text = pathText(path);
  const hint = numberText
    ? `${daml === 'Int64' ? `convert it: int(${text}), or ` : ''}compare it as a decimal: decimal(${text}) ${op} decimal("…")`
    : daml === 'Date'
      ? `compare it as a date: date(${text}) ${op} …`
      : daml === 'Timestamp'
        ? `compare it as a time: timestamp(${text}) ${op} …`
        : `compare it with ${p.cel === 'string' ? 'text' : `a ${p.cel}`}`;
  const last = path.segments[path.segments.length - 1]!;
  return {
    offset: last.offset,
    message: `${subjectOf(path.segments, path.variable)} is ${describe(p)}, ${wrong}`,
    hint,
  };
}

/** Whether two paths read the same thing (offsets aside). */
function samePath(a: ReadPath, b: { variable: string; segments: readonly ReadSegment[] }): boolean {
  return (
    a.variable === b.variable &&
    a.segments.length === b.segments.length &&
    a.segments.every((s, i) => s.name === b.segments[i]!.name)
  );
}

export type UnguardedRead = PathProblem & { readonly kind: 'optional' | 'variant' };

/** Reads below an Optional or a variant's `value` that no guard makes safe (warnings). */
export function unguardedReads(
  reads: readonly ReadPath[],
  guards: readonly Guard[],
  known: ValueRootTypes,
): UnguardedRead[] {
  const out: UnguardedRead[] = [];
  for (const path of reads) {
    const walk = walkRead(path, known);
    if (walk === null || walk.problem !== null) continue;
    // The walk's prefixes count from below the root (createArgument, view, …).
    const prefix = (n: number) => ({
      variable: path.variable,
      segments: path.segments.slice(0, n + 1),
    });
    for (const i of walk.throughOptional) {
      const p = prefix(i);
      if (guards.some((g) => g.kind === 'null' && samePath(g.path, p))) continue;
      const below = path.segments[i + 1]!;
      const text = pathText(p);
      out.push({
        kind: 'optional',
        offset: below.offset,
        message: `${subjectOf(p.segments, p.variable)} is an Optional: reading "${below.name}" below it fails when it is None (null)`,
        hint: `check it first: ${text} != null && …`,
      });
    }
    for (const i of walk.throughVariant) {
      const p = prefix(i);
      const below = path.segments[i + 2];
      if (below === undefined) continue; // `x.value` itself is whatever the constructor holds
      if (guards.some((g) => g.kind === 'tag' && samePath(g.path, p))) continue;
      out.push({
        kind: 'variant',
        offset: below.offset,
        message: `${subjectOf(p.segments, p.variable)} is a variant: "value" holds the argument of whichever constructor it has, so "${below.name}" may not be there`,
        hint: `check its constructor first: ${pathText(p)}.tag == "…" && …`,
      });
    }
  }
  return firstAtEachOffset(out);
}
