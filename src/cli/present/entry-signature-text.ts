import {
  childTypes,
  qualifiedNameOfRef,
  sameTypeCon,
  showType,
  type DamlType,
  type TypeConRef,
} from '../../daml-lf/daml-type.js';
import type { CatalogueEntry, PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import type {
  ChoiceSignature,
  DataTypeSignature,
  FieldSignature,
} from '../../daml-lf/package-signature.js';
import { recordFields, refText } from './package-view.js';

/**
 * `ledgerbot packages show REF`: one template or interface as Daml would declare it (fields,
 * key, implemented interfaces, view, choices with their argument fields and result), followed
 * by the data types it uses (records, variants, enums, each once, as far as the catalogue
 * knows them), so a rule writer sees the shape of every value a rule reads or writes.
 */

/** More data types than this are summarised (a type that reaches a whole library). */
const MAX_DATA_TYPES = 60;

export type UsedDataType = { readonly ref: TypeConRef; readonly dataType: DataTypeSignature };

export function entrySignatureText(catalogue: PackageCatalogue, entry: CatalogueEntry): string {
  const pkg = entry.pkg;
  const lines = [
    `-- #${pkg.name}:${entry.ref.module}:${entry.ref.name}`,
    `-- package ${pkg.name} ${pkg.version} (${pkg.packageId})`,
    `module ${entry.ref.module}`,
    '',
  ];
  const inline = new Set<string>();
  if (entry.kind === 'template') {
    const t = entry.template;
    lines.push(`template ${t.name}`, ...withFields(t.fields, '  '), '  where');
    if (t.key !== null) lines.push(`    key : ${show(t.key)}`);
    for (const i of t.implements) lines.push(`    implements ${refText(catalogue, i)}`);
    for (const c of t.choices) lines.push(...choiceLines(catalogue, c, '    ', inline));
  } else {
    const i = entry.iface;
    lines.push(`interface ${i.name} where`, `  viewtype ${show(i.view)}`);
    for (const r of i.requires) lines.push(`  requires ${refText(catalogue, r)}`);
    for (const c of i.choices) lines.push(...choiceLines(catalogue, c, '  ', inline));
  }
  const used = usedDataTypes(catalogue, entry).filter(
    (u) => !inline.has(key(u.ref)) && !sameTypeCon(u.ref, entry.ref),
  );
  if (used.length > 0) {
    lines.push('', '-- the data types it uses');
    for (const u of used.slice(0, MAX_DATA_TYPES)) lines.push(...dataTypeLines(u));
    if (used.length > MAX_DATA_TYPES) {
      lines.push(`-- and ${used.length - MAX_DATA_TYPES} more (see --json)`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const show = (t: DamlType): string => showType(t, { qualify: true });
const key = (r: TypeConRef): string => `${r.packageId}:${r.module}:${r.name}`;

function withFields(fields: readonly FieldSignature[], indent: string): string[] {
  if (fields.length === 0) return [];
  return [`${indent}with`, ...fields.map((f) => `${indent}  ${f.name} : ${show(f.type)}`)];
}

function choiceLines(
  catalogue: PackageCatalogue,
  c: ChoiceSignature,
  indent: string,
  inline: Set<string>,
): string[] {
  const head = `${indent}${c.consuming ? '' : 'nonconsuming '}choice ${c.name} : ${show(c.result)}`;
  const args = recordFields(catalogue, c.argument);
  if (args === null) return [head, `${indent}  -- argument : ${show(c.argument)}`];
  // The argument record is written in the choice, as Daml writes it.
  if (c.argument.kind === 'Con') inline.add(key(c.argument.ref));
  return [head, ...withFields(args, `${indent}  `)];
}

/** The data types reachable from an entry's types, breadth first, each once. */
export function usedDataTypes(catalogue: PackageCatalogue, entry: CatalogueEntry): UsedDataType[] {
  const roots: DamlType[] = [];
  const choices = entry.kind === 'template' ? entry.template.choices : entry.iface.choices;
  if (entry.kind === 'template') {
    roots.push(...entry.template.fields.map((f) => f.type));
    if (entry.template.key !== null) roots.push(entry.template.key);
  } else {
    roots.push(entry.iface.view);
  }
  for (const c of choices) roots.push(c.argument, c.result);
  const seen = new Set<string>();
  const out: UsedDataType[] = [];
  const queue = [...roots];
  // Bounded by the catalogue: each data type is visited once.
  while (queue.length > 0) {
    const t = queue.shift()!;
    for (const ref of refsIn(t)) {
      if (seen.has(key(ref))) continue;
      seen.add(key(ref));
      const dataType = catalogue.dataType(ref);
      if (dataType === undefined || dataType.shape.kind === 'interface') continue;
      out.push({ ref, dataType });
      const shape = dataType.shape;
      if (shape.kind === 'record') queue.push(...shape.fields.map((f) => f.type));
      if (shape.kind === 'variant') queue.push(...shape.constructors.map((f) => f.type));
    }
  }
  return out;
}

function refsIn(t: DamlType): TypeConRef[] {
  return [...(t.kind === 'Con' ? [t.ref] : []), ...childTypes(t).flatMap(refsIn)];
}

function dataTypeLines({ ref, dataType }: UsedDataType): string[] {
  const params = dataType.params.map((p) => ` ${p}`).join('');
  const name = `${qualifiedNameOfRef(ref)}${params}`;
  const shape = dataType.shape;
  switch (shape.kind) {
    case 'record':
      return [`data ${name} = ${ref.name.split('.').at(-1)}`, ...withFields(shape.fields, '  ')];
    case 'variant':
      return [
        `data ${name}`,
        ...shape.constructors.map(
          (c, i) =>
            `  ${i === 0 ? '=' : '|'} ${c.name}${c.type.kind === 'Unit' ? '' : ` ${wrap(c.type)}`}`,
        ),
      ];
    case 'enum':
      return [`data ${name}`, ...shape.constructors.map((c, i) => `  ${i === 0 ? '=' : '|'} ${c}`)];
    case 'interface':
      return [];
  }
}

/** A constructor's argument, parenthesised when it is more than one word. */
function wrap(t: DamlType): string {
  const text = show(t);
  return /\s/.test(text) && !text.startsWith('(') && !text.startsWith('[') ? `(${text})` : text;
}
