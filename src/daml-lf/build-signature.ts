import { childTypes, type DamlType, type TypeConRef } from './daml-type.js';
import type { ArchiveLocation } from './daml-lf-error.js';
import type {
  DefDataType,
  DefInterface,
  DefTemplate,
  FieldWithType,
  Module,
  Package,
  TemplateChoice,
  TypeConId,
} from './generated/daml_lf2_pb.js';
import { PackageNames } from './package-names.js';
import type {
  ChoiceSignature,
  DataTypeSignature,
  FieldSignature,
  InterfaceSignature,
  ModuleSignature,
  PackageSignature,
  TemplateSignature,
} from './package-signature.js';
import { TypeConverter } from './type-converter.js';
import { deepFreeze } from '../core/deep-freeze.js';

/**
 * The signature of a decoded Daml-LF 2 package: names resolved through the interning tables,
 * every type reference made absolute (a reference to the package itself gets its id), and the
 * dependencies being the packages those types name (Daml-LF 2.1 has no import table, and the
 * imports of 2.2+ include packages only expressions use). Depends
 * on nothing but the package, so a package id always has the same signature, whichever DAR it
 * came from. Frozen, deeply.
 */
export function buildSignature(
  pkg: Package,
  packageId: string,
  lfVersion: string,
  where: ArchiveLocation,
): PackageSignature {
  const names = new PackageNames(pkg, packageId, where);
  const types = new TypeConverter(pkg, names, packageId, where);
  if (pkg.metadata === undefined) throw names.corrupt('it has no metadata (name and version)');
  const modules = pkg.modules.map((m) => moduleSignature(m, names, types));
  return deepFreeze({
    packageId,
    name: names.string(pkg.metadata.nameInternedStr),
    version: names.string(pkg.metadata.versionInternedStr),
    lfVersion,
    modules,
    dependencies: referencedPackages(modules, packageId),
  });
}

function moduleSignature(
  module: Module,
  names: PackageNames,
  types: TypeConverter,
): ModuleSignature {
  const name = names.dotted(module.nameInternedDname);
  const at = (what: string): string => `${what} in module ${name}`;
  const dataTypes = module.dataTypes.map((dt) => dataTypeSignature(dt, names, types, at));
  const records = new Map<string, readonly FieldSignature[]>();
  for (const dt of dataTypes) if (dt.shape.kind === 'record') records.set(dt.name, dt.shape.fields);
  const ref = (id: TypeConId | undefined): TypeConRef => names.typeConRef(id);
  return {
    name,
    dataTypes,
    synonyms: module.synonyms.map((syn) => {
      const synName = names.dotted(syn.nameInternedDname);
      return {
        name: synName,
        params: syn.params.map((p) => names.string(p.varInternedStr)),
        type: types.convert(syn.type, at(`type synonym ${synName}`)),
      };
    }),
    templates: module.templates.map((t) => templateSignature(t, names, types, records, ref, at)),
    interfaces: module.interfaces.map((i) => interfaceSignature(i, names, types, ref, at)),
  };
}

function dataTypeSignature(
  dt: DefDataType,
  names: PackageNames,
  types: TypeConverter,
  at: (what: string) => string,
): DataTypeSignature {
  const name = names.dotted(dt.nameInternedDname);
  const fields = (list: readonly FieldWithType[]): FieldSignature[] =>
    list.map((f) => {
      const field = names.string(f.fieldInternedStr);
      return { name: field, type: types.convert(f.type, at(`${name}.${field}`)) };
    });
  const cons = dt.DataCons;
  const shape: DataTypeSignature['shape'] | undefined =
    cons.case === 'record'
      ? { kind: 'record', fields: fields(cons.value.fields) }
      : cons.case === 'variant'
        ? { kind: 'variant', constructors: fields(cons.value.fields) }
        : cons.case === 'enum'
          ? {
              kind: 'enum',
              constructors: cons.value.constructorsInternedStr.map((c) => names.string(c)),
            }
          : cons.case === 'interface'
            ? { kind: 'interface' }
            : undefined;
  if (shape === undefined) throw names.corrupt(`data type ${name} has no constructors`);
  return {
    name,
    params: dt.params.map((p) => names.string(p.varInternedStr)),
    serializable: dt.serializable,
    shape,
  };
}

function templateSignature(
  t: DefTemplate,
  names: PackageNames,
  types: TypeConverter,
  records: ReadonlyMap<string, readonly FieldSignature[]>,
  ref: (id: TypeConId | undefined) => TypeConRef,
  at: (what: string) => string,
): TemplateSignature {
  const name = names.dotted(t.tyconInternedDname);
  const fields = records.get(name);
  if (fields === undefined) throw names.corrupt(`${at(`template ${name}`)} has no record type`);
  return {
    name,
    fields,
    choices: t.choices.map((c) => choiceSignature(c, names, types, at(`template ${name}`))),
    key: t.key === undefined ? null : types.convert(t.key.type, at(`the key of ${name}`)),
    implements: t.implements.map((i) => ref(i.interface)),
  };
}

function interfaceSignature(
  i: DefInterface,
  names: PackageNames,
  types: TypeConverter,
  ref: (id: TypeConId | undefined) => TypeConRef,
  at: (what: string) => string,
): InterfaceSignature {
  const name = names.dotted(i.tyconInternedDname);
  return {
    name,
    view: types.convert(i.view, at(`the view of interface ${name}`)),
    choices: i.choices.map((c) => choiceSignature(c, names, types, at(`interface ${name}`))),
    requires: i.requires.map((r) => ref(r)),
  };
}

function choiceSignature(
  c: TemplateChoice,
  names: PackageNames,
  types: TypeConverter,
  owner: string,
): ChoiceSignature {
  const name = names.string(c.nameInternedStr);
  return {
    name,
    consuming: c.consuming,
    argument: types.convert(c.argBinder?.type, `the argument of choice ${name} of ${owner}`),
    result: types.convert(c.retType, `the result of choice ${name} of ${owner}`),
  };
}

/** The packages other than `self` that the signature's types and references name, sorted. */
function referencedPackages(modules: readonly ModuleSignature[], self: string): string[] {
  const ids = new Set<string>();
  const seen = new WeakSet<DamlType>();
  const visit = (type: DamlType): void => {
    if (seen.has(type)) return;
    seen.add(type);
    if (type.kind === 'Con') ids.add(type.ref.packageId);
    childTypes(type).forEach(visit);
  };
  const choices = (list: readonly ChoiceSignature[]): void =>
    list.forEach((c) => {
      visit(c.argument);
      visit(c.result);
    });
  for (const m of modules) {
    for (const dt of m.dataTypes) {
      if (dt.shape.kind === 'record') dt.shape.fields.forEach((f) => visit(f.type));
      if (dt.shape.kind === 'variant') dt.shape.constructors.forEach((f) => visit(f.type));
    }
    m.synonyms.forEach((s) => visit(s.type));
    for (const t of m.templates) {
      choices(t.choices);
      if (t.key !== null) visit(t.key);
      t.implements.forEach((r) => ids.add(r.packageId));
    }
    for (const i of m.interfaces) {
      visit(i.view);
      choices(i.choices);
      i.requires.forEach((r) => ids.add(r.packageId));
    }
  }
  ids.delete(self);
  return [...ids].sort();
}
