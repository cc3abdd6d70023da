import type { DamlType } from '../../src/daml-lf/daml-type.js';
import type {
  ChoiceSignature,
  FieldSignature,
  PackageSignature,
} from '../../src/daml-lf/package-signature.js';

/**
 * A package signature as Daml-like text, one declaration a line, for tests that compare a whole
 * signature with what the `.daml` sources declare. A reference to a type of the same package is
 * `Module:Entity`; of another package `name:Module:Entity` (`nameOf` gives the name of an id).
 */
export function renderPackage(
  sig: PackageSignature,
  nameOf: (packageId: string) => string | undefined,
): string {
  const ref = (r: { packageId: string; module: string; name: string }): string =>
    r.packageId === sig.packageId
      ? `${r.module}:${r.name}`
      : `${nameOf(r.packageId) ?? r.packageId}:${r.module}:${r.name}`;
  const type = (t: DamlType, nested = false): string => {
    const wrap = (s: string): string => (nested ? `(${s})` : s);
    switch (t.kind) {
      case 'Int64':
        return 'Int';
      case 'Timestamp':
        return 'Time';
      case 'Unit':
        return '()';
      case 'Numeric':
        return wrap(`Numeric ${typeof t.scale === 'number' ? t.scale : t.scale.var}`);
      case 'ContractId':
      case 'Optional':
      case 'TextMap':
        return wrap(`${t.kind} ${type(t.of, true)}`);
      case 'List':
        return `[${type(t.of)}]`;
      case 'GenMap':
        return wrap(`Map ${type(t.key, true)} ${type(t.value, true)}`);
      case 'Con':
        return t.args.length === 0
          ? ref(t.ref)
          : wrap([ref(t.ref), ...t.args.map((a) => type(a, true))].join(' '));
      case 'Var':
        return t.name;
      case 'Nat':
        return String(t.value);
      case 'Unsupported':
        return `<${t.text}>`;
      default:
        return t.kind;
    }
  };
  const head = (name: string, params: readonly string[]): string => [name, ...params].join(' ');
  const fields = (fs: readonly FieldSignature[]): string =>
    fs.length === 0 ? '{}' : `{ ${fs.map((f) => `${f.name} : ${type(f.type)}`).join('; ')} }`;
  const choice = (c: ChoiceSignature): string =>
    `    ${c.consuming ? '' : 'nonconsuming '}choice ${c.name} : ${type(c.argument)} -> ${type(c.result)}`;
  const lines = [
    `package ${sig.name} ${sig.version} (Daml-LF ${sig.lfVersion})`,
    `depends on ${
      sig.dependencies
        .map((d) => nameOf(d) ?? d)
        .sort()
        .join(', ') || 'nothing'
    }`,
  ];
  for (const m of sig.modules) {
    lines.push(`module ${m.name}`);
    for (const d of m.dataTypes) {
      const s = d.shape;
      const body =
        s.kind === 'record'
          ? `record ${head(d.name, d.params)} = ${fields(s.fields)}`
          : s.kind === 'variant'
            ? `variant ${head(d.name, d.params)} = ${s.constructors.map((c) => `${c.name} ${type(c.type, true)}`).join(' | ')}`
            : s.kind === 'enum'
              ? `enum ${d.name} = ${s.constructors.join(' | ')}`
              : `interface-type ${d.name}`;
      lines.push(`  ${d.serializable ? '' : '(not serializable) '}${body}`);
    }
    for (const s of m.synonyms) lines.push(`  synonym ${head(s.name, s.params)} = ${type(s.type)}`);
    for (const t of m.templates) {
      lines.push(`  template ${t.name} = ${fields(t.fields)}`);
      if (t.key !== null) lines.push(`    key ${type(t.key)}`);
      for (const i of t.implements) lines.push(`    implements ${ref(i)}`);
      lines.push(...t.choices.map(choice));
    }
    for (const i of m.interfaces) {
      lines.push(`  interface ${i.name}`, `    view ${type(i.view)}`);
      for (const r of i.requires) lines.push(`    requires ${ref(r)}`);
      lines.push(...i.choices.map(choice));
    }
  }
  return lines.join('\n');
}
