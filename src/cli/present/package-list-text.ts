import type { Colour } from './colour.js';
import type {
  ChoiceView,
  FieldView,
  PackageListView,
  PackageOriginView,
  PackageView,
} from './package-view.js';

/**
 * `ledgerbot packages list` for a terminal: each package (name, version, id, where it was read
 * from), then its templates and interfaces, one line each for fields, key, implemented
 * interfaces, view and choices (argument fields and result type), in the Daml-like notation of
 * `packages show`. Packages that declare neither (the standard library, data-type packages)
 * come last, their header line only.
 */
export function packageListText(view: PackageListView, c: Colour): string {
  const lines: string[] = [];
  const declaring = view.packages.filter((p) => p.templates.length + p.interfaces.length > 0);
  const dataOnly = view.packages.filter((p) => p.templates.length + p.interfaces.length === 0);
  for (const pkg of declaring) lines.push(...packageLines(pkg, c));
  if (dataOnly.length > 0) {
    lines.push('', c.dim(`${dataOnly.length} package(s) with data types only:`));
    for (const pkg of dataOnly) lines.push(...packageLines(pkg, c));
  }
  const entries = declaring.reduce((n, p) => n + p.templates.length + p.interfaces.length, 0);
  lines.push(
    '',
    `${view.packages.length} package(s), ${entries} template(s) and interface(s)` +
      (view.complete ? '; every package of the participant' : ''),
  );
  for (const s of view.sources) lines.push(c.dim(`  ${s}`));
  return `${lines.join('\n')}\n`;
}

function packageLines(pkg: PackageView, c: Colour): string[] {
  const lines = [
    `${c.bold(`${pkg.name} ${pkg.version}`)}  ${pkg.packageId}${c.dim(originText(pkg.from))}`,
  ];
  for (const t of pkg.templates) {
    lines.push(`  template ${t.module}:${t.name} ${fieldList(t.fields)}`);
    if (t.key !== null) lines.push(`    key ${t.key}`);
    for (const i of t.implements) lines.push(`    implements ${i}`);
    for (const ch of t.choices) lines.push(`    ${choiceText(ch)}`);
  }
  for (const i of pkg.interfaces) {
    lines.push(`  interface ${i.module}:${i.name}`);
    lines.push(`    view ${i.view}${i.viewFields === null ? '' : ` ${fieldList(i.viewFields)}`}`);
    for (const ch of i.choices) lines.push(`    ${choiceText(ch)}`);
  }
  return lines;
}

function originText(from: PackageOriginView | null): string {
  if (from === null) return '';
  return from.kind === 'participant'
    ? '  (participant)'
    : `  (${from.kind === 'model' ? 'model ' : ''}${from.file})`;
}

function fieldList(fields: readonly FieldView[]): string {
  return `(${fields.map((f) => `${f.name} : ${f.type}`).join(', ')})`;
}

/** `choice Transfer (newOwner : Party) : ContractId Iou`, `nonconsuming choice …` */
function choiceText(ch: ChoiceView): string {
  const args = ch.argumentFields === null ? `(${ch.argument})` : fieldList(ch.argumentFields);
  return `${ch.consuming ? '' : 'nonconsuming '}choice ${ch.name} ${args} : ${ch.result}`;
}
