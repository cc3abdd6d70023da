import {
  EVERY_ITEM,
  type NumberOperand,
  type ReadPath,
  type ReadSegment,
} from './cel/read-paths.js';
import { closestMatch } from '../core/source/closest-match.js';
import type { Trigger } from './compiled-rule.js';
import { valueRootLength } from './field-reads.js';
import type { CatalogueField, CatalogueTemplate, CatalogueType } from './package-catalogue.js';

/**
 * Field names checked against the templates the catalogue knows. A missing Optional field reads
 * `null` (field-reads.ts), so without this check a misspelt field would read `null` too and a
 * rule would quietly do the wrong thing; where the template's fields are known, it is an error.
 */

/** What a Daml-value root of `event` or `contract` holds, as the catalogue describes it. */
type ValueRoot = { readonly what: string; readonly types: CatalogueType[] };

export type ValueRootTypes = {
  readonly variable: 'event' | 'contract';
  /** Root field name (createArgument, ...) → what it is; several with several package versions. */
  readonly roots: ReadonlyMap<string, ValueRoot>;
};

export type UnknownFieldRead = {
  /** Where the misspelt field name starts in the expression (0-based). */
  readonly offset: number;
  readonly message: string;
  readonly hint: string;
};

/**
 * The value roots a rule's expressions can check, from its trigger and the catalogue entries of
 * its template (all package versions). A root is left out when any version does not describe it.
 */
export function valueRootTypes(
  trigger: Trigger,
  entries: readonly CatalogueTemplate[],
): ValueRootTypes | null {
  if (entries.length === 0) return null;
  const roots = new Map<string, { what: string; types: CatalogueType[] }>();
  const add = (
    root: string,
    what: string,
    typeOf: (t: CatalogueTemplate) => CatalogueType | undefined,
  ): void => {
    const types = entries.map(typeOf);
    if (types.every((t): t is CatalogueType => t !== undefined)) roots.set(root, { what, types });
  };
  const record = (fields: readonly CatalogueField[] | undefined): CatalogueType | undefined =>
    fields === undefined ? undefined : { kind: 'record', fields };
  if (trigger.kind === 'created' || (trigger.kind === 'schedule' && trigger.forEach !== null)) {
    const template =
      trigger.kind === 'created' ? trigger.template : (trigger.forEach?.template ?? null);
    const name = template?.qualifiedName ?? '';
    add('createArgument', `template ${name}`, (t) => record(t.fields));
    add('contractKey', `the key of ${name}`, (t) => t.keyType);
    return { variable: trigger.kind === 'created' ? 'event' : 'contract', roots };
  }
  if (trigger.kind === 'exercised') {
    const choice = trigger.choice;
    add(
      'choiceArgument',
      `the argument of choice ${choice} of ${trigger.template.qualifiedName}`,
      (t) => record(t.choiceArguments?.[choice]),
    );
    return { variable: 'event', roots };
  }
  return null;
}

/** The reads of one expression that name a field the catalogue's types do not have. */
export function unknownFieldReads(
  reads: readonly ReadPath[],
  known: ValueRootTypes,
): UnknownFieldRead[] {
  const out: UnknownFieldRead[] = [];
  for (const path of reads) {
    const root = rootOf(path, known);
    if (root === undefined) continue;
    const problem = check(path.segments.slice(1), root.types, root.what);
    if (problem !== null) out.push(problem);
  }
  return firstAtEachOffset(out);
}

/** The catalogued root a read starts from (`event.createArgument`), when it is one. */
function rootOf(path: ReadPath, known: ValueRootTypes): ValueRoot | undefined {
  if (path.variable !== known.variable || valueRootLength(path.segments) !== 1) return undefined;
  return known.roots.get(path.segments[0]!.name);
}

/** One problem per place in the expression: the first found there. */
function firstAtEachOffset(problems: readonly UnknownFieldRead[]): UnknownFieldRead[] {
  const seen = new Set<number>();
  return problems.filter((p) => {
    if (seen.has(p.offset)) return false;
    seen.add(p.offset);
    return true;
  });
}

/** `Optional r` is `r` or null on the wire, so its fields are read as `r`'s. */
function unwrapOptional(type: CatalogueType): CatalogueType {
  return type.kind === 'optional' && type.of.kind !== 'optional' ? type.of : type;
}

function check(
  segments: readonly ReadSegment[],
  start: readonly CatalogueType[],
  rootWhat: string,
): UnknownFieldRead | null {
  let types = start;
  let what = rootWhat;
  for (const segment of segments) {
    const unwrapped = types.map(unwrapOptional);
    if (segment.name === EVERY_ITEM) {
      if (!unwrapped.every((t) => t.kind === 'list' || t.kind === 'textMap')) return null;
      types = unwrapped.map((t) => (t as { of: CatalogueType }).of);
      what = `an item of ${what}`;
      continue;
    }
    if (!unwrapped.every((t) => t.kind === 'record')) return null; // a variant, text, ...
    const fields = unwrapped.flatMap((t) => (t as { fields: readonly CatalogueField[] }).fields);
    const matching = fields.filter((f) => f.name === segment.name);
    if (matching.length === 0) {
      const names = [...new Set(fields.map((f) => f.name))];
      const guess = closestMatch(segment.name, names);
      return {
        offset: segment.offset,
        message: `${what} has no field "${segment.name}"`,
        hint:
          guess !== undefined
            ? `did you mean "${guess}"?`
            : names.length === 0
              ? 'it has no fields'
              : `its fields: ${names.sort().join(', ')}`,
      };
    }
    types = matching.map((f) => f.type);
    what = `field "${segment.name}"`;
  }
  return null;
}

/**
 * The Daml types at the end of `segments`, below `start`; null when the path leaves what the
 * catalogue describes (an unknown field, a variant, ...).
 */
function typesAt(
  segments: readonly ReadSegment[],
  start: readonly CatalogueType[],
): CatalogueType[] | null {
  let types = [...start];
  for (const segment of segments) {
    const unwrapped = types.map(unwrapOptional);
    if (segment.name === EVERY_ITEM) {
      if (!unwrapped.every((t) => t.kind === 'list' || t.kind === 'textMap')) return null;
      types = unwrapped.map((t) => (t as { of: CatalogueType }).of);
      continue;
    }
    if (!unwrapped.every((t) => t.kind === 'record')) return null;
    const fields = unwrapped.flatMap((t) => (t as { fields: readonly CatalogueField[] }).fields);
    const matching = fields.filter((f) => f.name === segment.name);
    if (matching.length === 0) return null;
    types = matching.map((f) => f.type);
  }
  return types.map(unwrapOptional);
}

/**
 * Daml Numeric and Int64 values are text in CEL, so a field of those types compared or computed
 * with a number literal fails at run time ("no such overload: dyn<string> >= int"), or, with
 * `==` and `!=`, is quietly always false (true). Found where the catalogue knows the type.
 */
export function numberTextOperands(
  operands: readonly NumberOperand[],
  known: ValueRootTypes,
): UnknownFieldRead[] {
  const out: UnknownFieldRead[] = [];
  for (const { path, op } of operands) {
    const root = rootOf(path, known);
    if (root === undefined) continue;
    const types = typesAt(path.segments.slice(1), root.types);
    if (types === null || types.length === 0) continue;
    const names = new Set(types.map((t) => (t.kind === 'other' ? t.daml : undefined)));
    if (![...names].every((n) => n === 'Numeric' || n === 'Int64')) continue;
    const daml = names.has('Numeric') ? 'Numeric' : 'Int64';
    const last = path.segments[path.segments.length - 1]!;
    const text = [path.variable, ...path.segments.map((s) => s.name)]
      .join('.')
      .replaceAll(`.${EVERY_ITEM}`, '[…]');
    const what =
      op === '==' || op === '!='
        ? `so \`${op}\` with a number is always ${op === '==' ? 'false' : 'true'}`
        : `so \`${op}\` with a number fails on every event ("no such overload")`;
    out.push({
      offset: last.offset,
      message: `${subject(path.segments)} is a Daml ${daml}, which arrives as text, ${what}`,
      hint:
        daml === 'Numeric'
          ? `compare it as a decimal: decimal(${text}) ${op} decimal("…")`
          : `convert it: int(${text}) ${op} …, or decimal(${text}) ${op} decimal("…")`,
    });
  }
  return firstAtEachOffset(out);
}

/** `field "amount"`, or `an item of field "counts"` for a list item. */
function subject(segments: readonly ReadSegment[]): string {
  const named = [...segments].reverse().find((s) => s.name !== EVERY_ITEM)?.name ?? '';
  return segments[segments.length - 1]?.name === EVERY_ITEM
    ? `an item of field "${named}"`
    : `field "${named}"`;
}
