import { closestMatch } from '../core/source/closest-match.js';
import { showType, type DamlType } from '../daml-lf/daml-type.js';
import type { PackageCatalogue, ResolvedType } from '../daml-lf/package-catalogue.js';
import { EVERY_ITEM, type ReadSegment } from './cel/read-paths.js';

/**
 * Where a field path below a Daml value leads, by the catalogue's types: `createArgument` of
 * `#shop:Shop:Order` → `item` → `price` is an `Optional (Numeric 2)`. Several package versions of
 * one template walk together (a field one of them has is known); a path that leaves what the
 * catalogue describes (a package it does not have, a type variable, a pair of a Map) stops being
 * checked, never an error.
 *
 * How Daml values look in CEL (as the JSON Ledger API sends them): a record is a map of its
 * fields; a variant `{tag, value}`; an enum, Text, Party, ContractId, Int64, Numeric, Date and Time
 * are text; `Optional a` is `a` or null, but `Optional (Optional a)` a list of zero or one item at
 * every level; a List a list; a TextMap a map; a `Map k v` (GenMap) a list of `[k, v]` pairs;
 * Unit `{}`.
 */

/** One problem of a path, at a segment of it. */
export type PathProblem = {
  /** Where the segment starts in the expression (0-based). */
  readonly offset: number;
  readonly message: string;
  readonly hint: string;
};

export type PathWalk = {
  /** The resolved types at the end of the path; null when the walk left what is known. */
  readonly leaves: readonly ResolvedType[] | null;
  readonly problem: PathProblem | null;
  /**
   * Prefix lengths (in segments) whose value may be null (an `Optional a`) and that the path
   * reads below: `note` in `terms.note.text` when `note` is Optional.
   */
  readonly throughOptional: readonly number[];
  /** Prefix lengths whose value is a variant that the path reads the `value` of. */
  readonly throughVariant: readonly number[];
};

/** `field "amount"`, or `an item of field "counts"` for a list item. */
export function subjectOf(segments: readonly ReadSegment[], root: string): string {
  const named = [...segments].reverse().find((s) => s.name !== EVERY_ITEM)?.name;
  if (named === undefined) return root;
  return segments[segments.length - 1]?.name === EVERY_ITEM
    ? `an item of field "${named}"`
    : `field "${named}"`;
}

/** Walks `segments` from `start` (one type per package version), resolving with `catalogue`. */
export function walkPath(
  catalogue: PackageCatalogue,
  start: readonly DamlType[],
  segments: readonly ReadSegment[],
  rootWhat: string,
): PathWalk {
  let types: DamlType[] = [...start];
  const throughOptional: number[] = [];
  const throughVariant: number[] = [];
  const result = (
    leaves: readonly ResolvedType[] | null,
    problem: PathProblem | null = null,
  ): PathWalk => ({ leaves, problem, throughOptional, throughVariant });
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    // Named only in a problem (most walks have none).
    const what = (): string => (i === 0 ? rootWhat : subjectOf(segments.slice(0, i), rootWhat));
    let resolved = types.map((t) => catalogue.resolve(t));
    // `Optional a` is `a` or null on the wire: reading below it reads `a`.
    if (resolved.some((t) => t.kind === 'Optional' && t.of.kind !== 'Optional')) {
      throughOptional.push(i);
      resolved = resolved.map((t) =>
        t.kind === 'Optional' && t.of.kind !== 'Optional' ? catalogue.resolve(t.of) : t,
      );
    }
    const kinds = new Set(resolved.map((t) => t.kind));
    if (kinds.size !== 1) return result(null);
    const first = resolved[0]!;
    const problem = (message: string, hint: string): PathWalk =>
      result(null, { offset: segment.offset, message, hint });
    switch (first.kind) {
      case 'Record': {
        if (segment.name === EVERY_ITEM) return result(null); // `r[k]`: a computed field name
        const fields = resolved.flatMap((t) => (t.kind === 'Record' ? t.fields : []));
        const matching = fields.filter((f) => f.name === segment.name);
        if (matching.length === 0) {
          const names = [...new Set(fields.map((f) => f.name))];
          const guess = closestMatch(segment.name, names);
          return problem(
            `${what()} has no field "${segment.name}"`,
            guess !== undefined
              ? `did you mean "${guess}"?`
              : names.length === 0
                ? 'it has no fields'
                : `its fields: ${names.sort().join(', ')}`,
          );
        }
        types = matching.map((f) => f.type);
        continue;
      }
      case 'Variant': {
        if (segment.name === 'tag') {
          types = [{ kind: 'Text' }];
          continue;
        }
        if (segment.name === 'value') {
          throughVariant.push(i);
          types = resolved.flatMap((t) =>
            t.kind === 'Variant' ? t.constructors.map((c) => c.type) : [],
          );
          // Constructors of different kinds: which one is there is known only at run time.
          if (new Set(types.map((t) => catalogue.resolve(t).kind)).size !== 1) return result(null);
          continue;
        }
        const ctors = resolved.flatMap((t) =>
          t.kind === 'Variant' ? t.constructors.map((c) => c.name) : [],
        );
        return problem(
          `${what()} is a variant (${showType(types[0]!)}), which has only "tag" and "value", not "${segment.name}"`,
          `its tag is one of ${[...new Set(ctors)].join(', ')}: compare it first, e.g. x.tag == "${ctors[0] ?? 'Ctor'}" && x.value…`,
        );
      }
      case 'List':
      case 'Optional': // nested: a list of zero or one item
        if (segment.name !== EVERY_ITEM) {
          return problem(
            `${what()} is a list (${showType(types[0]!)}), which has no field "${segment.name}"`,
            first.kind === 'List'
              ? 'read its items: x[0].field, or x.all(i, i.field …), x.exists(i, …)'
              : 'a nested Optional is a list of zero or one item: x.size() > 0 && x[0]…',
          );
        }
        types = resolved.map((t) => (t as { of: DamlType }).of);
        continue;
      case 'TextMap':
        // `m.key` and `m[k]` both read a value of the map.
        types = resolved.map((t) => (t as { of: DamlType }).of);
        continue;
      case 'GenMap':
        if (segment.name === EVERY_ITEM) return result(null); // a [key, value] pair
        return problem(
          `${what()} is a Map (${showType(types[0]!)}), a list of [key, value] pairs, which has no field "${segment.name}"`,
          'read its pairs: x.exists(p, p[0] == … && p[1] …)',
        );
      case 'Party':
      case 'Text':
      case 'Int64':
      case 'Numeric':
      case 'Date':
      case 'Timestamp':
      case 'ContractId':
      case 'Bool':
      case 'Unit':
      case 'Enum':
        return problem(
          `${what()} is ${describeLeaf(first, types[0]!)}, which has no field "${segment.name}"`,
          first.kind === 'Enum'
            ? `an enum value is the name of its constructor, as text (${first.constructors.join(', ')})`
            : 'remove the field, or read another field of the record around it',
        );
      default:
        return result(null); // an unknown data type, a type variable, an interface, …
    }
  }
  const leaves = types.map((t) => catalogue.resolve(t));
  return result(leaves);
}

/** `a Party (text)`, `an Int (text)`, `a Bool`, `Unit ({})`, `an enum (Color)`. */
function describeLeaf(resolved: ResolvedType, type: DamlType): string {
  const shown = showType(type);
  switch (resolved.kind) {
    case 'Enum':
      return `an enum (${shown}), which is text`;
    case 'Unit':
      return 'Unit ({})';
    case 'Bool':
      return 'a Bool';
    default:
      return `${/^[AEIOU]/.test(shown) ? 'an' : 'a'} ${shown} (text)`;
  }
}
