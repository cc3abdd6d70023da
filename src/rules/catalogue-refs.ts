import { closestMatch } from '../core/source/closest-match.js';
import type { YamlPath } from '../core/yaml-locator.js';
import type { DamlType } from '../daml-lf/daml-type.js';
import {
  referenceText,
  type CatalogueEntry,
  type PackageCatalogue,
} from '../daml-lf/package-catalogue.js';
import type { RefKind, TemplateRef } from './compiled-rule.js';
import { parseTemplateRef } from './parse-template-ref.js';
import type { RuleScope } from './rule-scope.js';
import { hasTemplate } from './split-template.js';

/**
 * Template and interface references checked against the catalogue, each problem at the
 * reference with a did-you-mean over the catalogue's `#name:Module:Entity` texts:
 * - a package the catalogue does not have: UNKNOWN_PACKAGE, an error when the catalogue is
 *   complete (read from the participant), a warning when it is partial (models, DAR files);
 * - a known package without that template or interface: UNKNOWN_TEMPLATE / UNKNOWN_INTERFACE;
 * - an interface where a template is needed, or the reverse: REF_KIND, saying why.
 * Without a catalogue a reference is taken as written: a template, unless `interface:` says so.
 */

/** Where a reference is written: what it may name and what to say when it names the other. */
export type RefRole =
  | 'created'
  | 'archived'
  | 'forEach'
  | 'exercised'
  | 'exercise'
  | 'create'
  | 'createAndExercise'
  | 'exerciseByKey';

export type ResolvedRef = {
  readonly ref: TemplateRef;
  readonly refKind: RefKind;
  /** The catalogue's entries (every package version); empty without a catalogue or when unknown. */
  readonly entries: readonly CatalogueEntry[];
};

/**
 * Parses and checks a reference. `written`: 'interface' when the rule wrote `interface:`,
 * 'template' for `template:`, 'either' where the catalogue decides (`created`, `forEach`, …).
 */
export function resolveRef(
  scope: RuleScope,
  raw: unknown,
  path: YamlPath,
  written: 'template' | 'interface' | 'either',
  role: RefRole,
): ResolvedRef | null {
  if (typeof raw !== 'string') return null;
  const ref = parseTemplateRef(raw);
  if (ref === null) return null; // reported by the schema
  const pos = scope.at.pos(path);
  if (ref.form === 'package-id') {
    scope.warn(
      pos,
      'PACKAGE_ID_REF',
      `"${raw}" names a package by id, which is deprecated`,
      `write "#<package-name>:${ref.qualifiedName}": package-name references keep matching after package upgrades`,
    );
  }
  const assumed: RefKind = written === 'interface' ? 'interface' : 'template';
  const catalogue = scope.file.packages;
  if (catalogue === undefined) return { ref, refKind: assumed, entries: [] };
  const known =
    ref.form === 'package-name'
      ? catalogue.packagesNamed(ref.packageName).length > 0
      : catalogue.packageById(ref.packageId) !== undefined;
  if (!known) {
    reportUnknownPackage(scope, catalogue, ref, path);
    return { ref, refKind: assumed, entries: [] };
  }
  const entries = catalogue.entries(ref);
  if (entries.length === 0) {
    const wanted = written === 'either' ? null : written;
    const candidates = catalogue
      .allEntries()
      .filter((e) => wanted === null || e.kind === wanted)
      .map(referenceText);
    const guess = closestMatch(
      ref.form === 'package-name'
        ? raw
        : `#${catalogue.packageNameOf(ref.packageId)}:${ref.qualifiedName}`,
      candidates,
    );
    const noun = wanted ?? 'template or interface';
    const pkg =
      ref.form === 'package-name' ? `package "${ref.packageName}"` : `package ${ref.packageId}`;
    scope.error(
      pos,
      wanted === 'interface' ? 'UNKNOWN_INTERFACE' : 'UNKNOWN_TEMPLATE',
      `unknown ${wanted ?? 'template'} "${raw}": ${pkg} has no ${noun} ${ref.qualifiedName}`,
      guess !== undefined
        ? `did you mean "${guess}"?`
        : `known: ${candidates.slice(0, 10).join(', ')}${candidates.length > 10 ? ', …' : ''}`,
    );
    return null;
  }
  const refKind: RefKind = entries[0]!.kind;
  const problem = kindProblem(catalogue, entries, refKind, written, role);
  if (problem !== null) {
    scope.error(pos, 'REF_KIND', problem.message, problem.hint);
    return null;
  }
  return { ref, refKind, entries };
}

function reportUnknownPackage(
  scope: RuleScope,
  catalogue: PackageCatalogue,
  ref: TemplateRef,
  path: YamlPath,
): void {
  const names = catalogue.packageNames();
  const report = catalogue.complete ? scope.error.bind(scope) : scope.warn.bind(scope);
  const guess = ref.form === 'package-name' ? closestMatch(ref.packageName, names) : undefined;
  const which = ref.form === 'package-name' ? `"${ref.packageName}"` : ref.packageId;
  report(
    scope.at.pos(path),
    'UNKNOWN_PACKAGE',
    `no known package ${ref.form === 'package-name' ? 'is named' : 'has the id'} ${which}${catalogue.complete ? '' : ', so its types are not checked'}`,
    guess !== undefined
      ? `did you mean "#${guess}:${ref.qualifiedName}"?`
      : catalogue.complete
        ? `the participant has: ${someNames(names) || 'no packages'}`
        : `the packages given are: ${someNames(names) || 'none'}; add the package's DAR to check it`,
  );
}

/**
 * At most a dozen names, the SDK's own (daml-prim, daml-stdlib, …) last: a DAR such as
 * splice-amulet's brings 37 packages, most of them the SDK's.
 */
function someNames(names: readonly string[]): string {
  const MAX = 12;
  const sdk = (n: string): boolean => n.startsWith('daml-') || n.startsWith('ghc-');
  const ordered = [...names.filter((n) => !sdk(n)), ...names.filter(sdk)];
  if (ordered.length <= MAX) return ordered.join(', ');
  return `${ordered.slice(0, MAX).join(', ')} and ${ordered.length - MAX} more (ledgerbot packages list shows them all)`;
}

/** Why a template or interface cannot be used where it is written; null when it can. */
function kindProblem(
  catalogue: PackageCatalogue,
  entries: readonly CatalogueEntry[],
  kind: RefKind,
  written: 'template' | 'interface' | 'either',
  role: RefRole,
): { message: string; hint: string } | null {
  const entry = entries[0]!;
  const name = referenceText(entry);
  if (kind === 'template') {
    if (written !== 'interface') return null;
    const implemented =
      entry.kind === 'template' ? entry.template.implements.map((i) => catalogue.entryOf(i)) : [];
    const interfaces = implemented.flatMap((e) => (e === undefined ? [] : [referenceText(e)]));
    return {
      message: `${name} is a template, not an interface`,
      hint:
        interfaces.length > 0
          ? `write \`template: '${name}'\`, or name an interface it implements: ${interfaces.join(', ')}`
          : `write \`template: '${name}'\``,
    };
  }
  const implementers = catalogue.implementersOf(entry.ref).map(referenceText).slice(0, 5);
  const some =
    implementers.length > 0 ? ` (e.g. ${implementers.join(', ')})` : ' (the catalogue has none)';
  switch (role) {
    case 'created':
    case 'archived':
    case 'forEach':
      return null;
    case 'exercised':
    case 'exercise':
      return written === 'template'
        ? {
            message: `${name} is an interface: write \`interface: '${name}'\` instead of \`template:\``,
            hint: 'an interface choice is exercised through the interface, on any contract whose template implements it',
          }
        : null;
    case 'create':
    case 'createAndExercise':
      return {
        message: `${name} is an interface: ${role} needs a template, since an interface has no contracts of its own`,
        hint: `create a template that implements it${some}`,
      };
    case 'exerciseByKey':
      return {
        message: `${name} is an interface: exerciseByKey needs a template with a contract key`,
        hint: `exercise the interface choice by contract id: \`exercise: { interface: '${name}', contractId: …, choice: … }\`, or name a template with a key${some}`,
      };
  }
}

/** The choices of an entry (a template's include Archive). */
export function choicesOf(entry: CatalogueEntry) {
  return entry.kind === 'template' ? entry.template.choices : entry.iface.choices;
}

/**
 * The Daml type of a command's value field (`createArguments`, `choiceArgument` of `choice`,
 * `contractKey`) by one version of its template or interface; null when it has none (an
 * interface has no arguments to create and no key).
 */
export function commandValueType(
  entry: CatalogueEntry,
  field: string,
  choice: unknown,
): DamlType | null {
  switch (field) {
    case 'createArguments':
      return entry.kind === 'template' ? { kind: 'Con', ref: entry.ref, args: [] } : null;
    case 'choiceArgument':
      return choicesOf(entry).find((c) => c.name === choice)?.argument ?? null;
    case 'contractKey':
      return entry.kind === 'template' ? entry.template.key : null;
    default:
      return null;
  }
}

/** Reports a choice the template or interface does not have (any package version counts). */
export function checkChoice(
  scope: RuleScope,
  resolved: ResolvedRef,
  choice: string,
  path: YamlPath,
): void {
  if (hasTemplate(choice)) return; // reported as TEMPLATE_NOT_ALLOWED
  const entries = resolved.entries;
  if (entries.length === 0) return; // unknown, reported already, or no catalogue
  const choices = new Set(entries.flatMap((e) => choicesOf(e).map((c) => c.name)));
  if (choices.has(choice)) return;
  const catalogue = scope.file.packages!;
  const viaInterface = entries
    .flatMap((e) => (e.kind === 'template' ? e.template.implements : []))
    .map((i) => catalogue.entryOf(i))
    .find((i) => i !== undefined && choicesOf(i).some((c) => c.name === choice));
  const guess = closestMatch(choice, choices);
  const noun = resolved.refKind === 'interface' ? 'interface' : 'template';
  scope.error(
    scope.at.pos(path),
    'UNKNOWN_CHOICE',
    `${noun} ${resolved.ref.qualifiedName} has no choice "${choice}"`,
    viaInterface !== undefined
      ? `"${choice}" is a choice of the interface ${referenceText(viaInterface)}, which it implements: write \`interface: '${referenceText(viaInterface)}'\` to exercise it`
      : guess !== undefined
        ? `did you mean "${guess}"?`
        : `its choices: ${[...choices].sort().join(', ') || 'none'}`,
  );
}
