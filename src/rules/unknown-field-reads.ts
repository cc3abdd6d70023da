import type { DamlType } from '../daml-lf/daml-type.js';
import type { CatalogueEntry, PackageCatalogue } from '../daml-lf/package-catalogue.js';
import { EVERY_ITEM, type NumberOperand, type ReadPath } from './cel/read-paths.js';
import type { Trigger } from './compiled-rule.js';
import { subjectOf, walkPath, type PathProblem, type PathWalk } from './daml-path-types.js';
import { valueRootLength } from './field-reads.js';

/**
 * Field names checked against the types the catalogue knows. A missing Optional field reads
 * `null` (field-reads.ts), so without this check a misspelt field would read `null` too and a
 * rule would quietly do the wrong thing; where the template's fields are known, it is an error.
 */

/** What a Daml-value root of `event` or `contract` holds: one type per package version. */
type ValueRoot = { readonly what: string; readonly types: readonly DamlType[] };

export type ValueRootTypes = {
  readonly catalogue: PackageCatalogue;
  readonly variable: 'event' | 'contract';
  /** Root field name (createArgument, view, ...) → what it is. */
  readonly roots: ReadonlyMap<string, ValueRoot>;
};

export type UnknownFieldRead = PathProblem;

/** The template or interface name of a catalogue entry, for messages. */
function nameOf(entry: CatalogueEntry): string {
  return `${entry.ref.module}:${entry.ref.name}`;
}

/**
 * The value roots a rule's expressions can check, from its trigger and the catalogue entries of
 * its template or interface (all package versions). A root is left out when any version does not
 * describe it.
 */
export function valueRootTypes(
  catalogue: PackageCatalogue,
  trigger: Trigger,
  entries: readonly CatalogueEntry[],
): ValueRootTypes | null {
  if (entries.length === 0) return null;
  let byTrigger = rootTypes.get(catalogue);
  if (byTrigger === undefined) {
    byTrigger = new Map();
    rootTypes.set(catalogue, byTrigger);
  }
  const key = triggerKey(trigger);
  const kept = byTrigger.get(key);
  if (kept !== undefined && sameEntries(kept.entries, entries)) return kept.types;
  const types = rootTypesOf(catalogue, trigger, entries);
  byTrigger.set(key, { entries, types });
  return types;
}

/**
 * The value roots of each trigger a catalogue was asked about: every rule with the same trigger
 * (kind, template or interface, choice) gets the same object, so the walks of its reads (kept per
 * object, below) serve them all: 1,000 rules have a few dozen distinct triggers.
 */
const rootTypes = new WeakMap<
  PackageCatalogue,
  Map<
    string,
    { readonly entries: readonly CatalogueEntry[]; readonly types: ValueRootTypes | null }
  >
>();

function triggerKey(trigger: Trigger): string {
  if (trigger.kind === 'schedule') return `schedule\u0000${trigger.forEach?.template.text ?? ''}`;
  const choice = trigger.kind === 'exercised' ? trigger.choice : '';
  return `${trigger.kind}\u0000${trigger.template.text}\u0000${choice}`;
}

function sameEntries(a: readonly CatalogueEntry[], b: readonly CatalogueEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}

function rootTypesOf(
  catalogue: PackageCatalogue,
  trigger: Trigger,
  entries: readonly CatalogueEntry[],
): ValueRootTypes | null {
  const roots = new Map<string, ValueRoot>();
  const add = (
    root: string,
    what: string,
    typeOf: (e: CatalogueEntry) => DamlType | null | undefined,
  ): void => {
    const types = entries.map(typeOf);
    if (types.every((t): t is DamlType => t !== undefined && t !== null)) {
      roots.set(root, { what, types });
    }
  };
  const name = nameOf(entries[0]!);
  const template = (e: CatalogueEntry) => (e.kind === 'template' ? e.template : undefined);
  if (trigger.kind === 'created' || (trigger.kind === 'schedule' && trigger.forEach !== null)) {
    add('createArgument', `template ${name}`, (e) =>
      e.kind === 'template' ? { kind: 'Con', ref: e.ref, args: [] } : undefined,
    );
    add('contractKey', `the key of ${name}`, (e) => template(e)?.key);
    add('view', `the view of interface ${name}`, (e) =>
      e.kind === 'interface' ? e.iface.view : undefined,
    );
    return { catalogue, variable: trigger.kind === 'created' ? 'event' : 'contract', roots };
  }
  if (trigger.kind === 'exercised') {
    const choice = (e: CatalogueEntry) =>
      (e.kind === 'template' ? e.template.choices : e.iface.choices).find(
        (c) => c.name === trigger.choice,
      );
    const of = `choice ${trigger.choice} of ${name}`;
    add('choiceArgument', `the argument of ${of}`, (e) => choice(e)?.argument);
    add('exerciseResult', `the result of ${of}`, (e) => choice(e)?.result);
    return { catalogue, variable: 'event', roots };
  }
  return null;
}

/**
 * The walks of one trigger's types (`known`, shared by the rules with that trigger), by the field
 * names of a read: an expression's checks (unknown fields, number text, comparisons, guards) each
 * walk the same reads, and the rules of a trigger read the same fields. A walk that found a
 * problem names where it is in its own expression, so only walks without one are kept.
 */
const walks = new WeakMap<ValueRootTypes, Map<string, PathWalk | null>>();

/** Where a read leads by the catalogue's types; null when it does not start at a known root. */
export function walkRead(path: ReadPath, known: ValueRootTypes): PathWalk | null {
  let byNames = walks.get(known);
  if (byNames === undefined) {
    byNames = new Map();
    walks.set(known, byNames);
  }
  let key = path.variable;
  for (const segment of path.segments) key += `\u0000${segment.name}`;
  let walk = byNames.get(key);
  if (walk === undefined) {
    walk = walkReadOnce(path, known);
    if (walk === null || walk.problem === null) byNames.set(key, walk);
  }
  return walk;
}

function walkReadOnce(path: ReadPath, known: ValueRootTypes): PathWalk | null {
  if (path.variable !== known.variable || valueRootLength(path.segments) !== 1) return null;
  const root = known.roots.get(path.segments[0]!.name);
  if (root === undefined) return null;
  return walkPath(known.catalogue, root.types, path.segments.slice(1), root.what);
}

/** The reads of one expression that name a field the catalogue's types do not have. */
export function unknownFieldReads(
  reads: readonly ReadPath[],
  known: ValueRootTypes,
): UnknownFieldRead[] {
  const out: UnknownFieldRead[] = [];
  for (const path of reads) {
    const problem = walkRead(path, known)?.problem;
    if (problem !== undefined && problem !== null) out.push(problem);
  }
  return firstAtEachOffset(out);
}

/** One problem per place in the expression: the first found there. */
export function firstAtEachOffset<T extends { readonly offset: number }>(
  problems: readonly T[],
): T[] {
  const seen = new Set<number>();
  return problems.filter((p) => {
    if (seen.has(p.offset)) return false;
    seen.add(p.offset);
    return true;
  });
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
    const leaves = walkRead(path, known)?.leaves;
    if (leaves === undefined || leaves === null || leaves.length === 0) continue;
    const kinds = new Set(
      leaves.map((t) => (t.kind === 'Optional' ? known.catalogue.resolve(t.of).kind : t.kind)),
    );
    if (![...kinds].every((n) => n === 'Numeric' || n === 'Int64')) continue;
    const daml = kinds.has('Numeric') ? 'Numeric' : 'Int64';
    const last = path.segments[path.segments.length - 1]!;
    const text = pathText(path);
    const what =
      op === '==' || op === '!='
        ? `so \`${op}\` with a number is always ${op === '==' ? 'false' : 'true'}`
        : `so \`${op}\` with a number fails on every event ("no such overload")`;
    out.push({
      offset: last.offset,
      message: `${subjectOf(path.segments, path.variable)} is a Daml ${daml}, which arrives as text, ${what}`,
      hint:
        daml === 'Numeric'
          ? `compare it as a decimal: decimal(${text}) ${op} decimal("…")`
          : `convert it: int(${text}) ${op} …, or decimal(${text}) ${op} decimal("…")`,
    });
  }
  return firstAtEachOffset(out);
}

/** `event.createArgument.lines[…].qty`, for hints. */
export function pathText(path: ReadPath): string {
  return [path.variable, ...path.segments.map((s) => s.name)]
    .join('.')
    .replaceAll(`.${EVERY_ITEM}`, '[…]');
}
