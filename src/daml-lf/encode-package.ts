import { create, toBinary } from '@bufbuild/protobuf';
import { sha256Hex } from '../core/sha256-hex.js';
import { childTypes, type DamlType, type TypeConRef } from './daml-type.js';
import { ArchivePayloadSchema } from './generated/daml_lf_pb.js';
import {
  DefDataTypeSchema,
  DefInterfaceSchema,
  DefTemplateSchema,
  DefTypeSynSchema,
  ModuleSchema,
  PackageSchema,
  TemplateChoiceSchema,
  TypeVarWithKindSchema,
  type DefDataType,
  type Module,
  type TemplateChoice,
  type TypeVarWithKind,
} from './generated/daml_lf2_pb.js';
import { InternTables } from './intern-tables.js';
import type {
  ChoiceSignature,
  DataTypeSignature,
  ModuleSignature,
  PackageSignature,
} from './package-signature.js';
import { readPackagePayload, type PackageArchive } from './read-dalf.js';

/**
 * What the encoder writes: a package signature without the parts the archive determines (its id
 * is the hash of the bytes; the LF version is 2.1; the dependencies are what the types name). A
 * type reference to the package itself has `packageId: ''`. A `PackageSignature` (or a sandbox
 * model's) can be given as it is: the other fields are ignored.
 */
export type PackageDraft = Pick<PackageSignature, 'name' | 'version' | 'modules'>;

/** The Daml-LF minor version the encoder writes (2.1: Canton 3.3 and later read it). */
const LF_MINOR = '1';

/**
 * A Daml-LF 2.1 archive declaring exactly the draft's data types, synonyms, templates and
 * interfaces, with no expressions (no signatories, no choice bodies: a participant would refuse
 * to run it; ledgerbot's sandbox serves it and reads it back). A template's record, and an
 * interface's data type, are added when the draft's module does not declare them. Deterministic:
 * the same draft gives the same bytes and id. The result is read back, so its signature is
 * exactly what a reader of the archive finds (self references carry the new id). Throws a
 * `DamlLfError` (INVALID_DRAFT) for a draft that cannot be written: a reference to a data type
 * the draft does not declare, a name that is not a dotted name, an `Unsupported` type.
 */
export function encodePackage(draft: PackageDraft): PackageArchive {
  const source = `package draft ${draft.name}-${draft.version}`;
  const tables = new InternTables(source);
  if (draft.name === '' || draft.version === '') tables.invalid('the name and version must be set');
  const declared = new Set<string>();
  for (const m of draft.modules)
    for (const d of withImplicitTypes(m)) declared.add(`${m.name}:${d.name}`);
  const checkRef = (ref: TypeConRef, what: string): void => {
    if (ref.packageId === '' && !declared.has(`${ref.module}:${ref.name}`)) {
      tables.invalid(
        `${what} refers to ${ref.module}:${ref.name}, which the draft does not declare`,
      );
    }
  };
  const modules = draft.modules.map((m) => encodeModule(m, tables, checkRef));
  const pkg = create(PackageSchema, {
    modules,
    metadata: {
      nameInternedStr: tables.string(draft.name),
      versionInternedStr: tables.string(draft.version),
    },
  });
  // Filled while the modules and metadata were encoded above.
  pkg.internedStrings = tables.strings;
  pkg.internedDottedNames = tables.dottedNames;
  pkg.internedTypes = tables.types;
  const payload = toBinary(
    ArchivePayloadSchema,
    create(ArchivePayloadSchema, {
      minor: LF_MINOR,
      Sum: { case: 'damlLf2', value: toBinary(PackageSchema, pkg) },
    }),
  );
  return readPackagePayload(payload, { source, packageId: sha256Hex(payload) });
}

/** The module's data types, plus the records of templates and the types of interfaces it lacks. */
function withImplicitTypes(m: ModuleSignature): DataTypeSignature[] {
  const out = [...m.dataTypes];
  const names = new Set(out.map((d) => d.name));
  for (const t of m.templates) {
    if (!names.has(t.name)) {
      out.push({
        name: t.name,
        params: [],
        serializable: true,
        shape: { kind: 'record', fields: t.fields },
      });
    }
  }
  for (const i of m.interfaces) {
    if (!names.has(i.name)) {
      out.push({ name: i.name, params: [], serializable: false, shape: { kind: 'interface' } });
    }
  }
  return out;
}

function encodeModule(
  m: ModuleSignature,
  tables: InternTables,
  checkRef: (ref: TypeConRef, what: string) => void,
): Module {
  const at = (what: string): string => `${what} in module ${m.name}`;
  const type = (t: DamlType, what: string): ReturnType<InternTables['type']> => {
    forEachRef(t, (ref) => checkRef(ref, what));
    return tables.type(t, what);
  };
  const dataTypes = withImplicitTypes(m);
  for (const t of m.templates) {
    const record = dataTypes.find((d) => d.name === t.name);
    if (record?.shape.kind !== 'record' || record.params.length > 0) {
      tables.invalid(
        `${at(`template ${t.name}`)}: its data type is not a record without parameters`,
      );
    }
    if (JSON.stringify(record.shape.fields) !== JSON.stringify(t.fields)) {
      tables.invalid(`${at(`template ${t.name}`)}: its fields differ from its record's`);
    }
  }
  const choice = (c: ChoiceSignature, owner: string): TemplateChoice =>
    create(TemplateChoiceSchema, {
      nameInternedStr: tables.string(c.name),
      consuming: c.consuming,
      argBinder: {
        varInternedStr: tables.string('arg'),
        type: type(c.argument, at(`the argument of choice ${c.name} of ${owner}`)),
      },
      retType: type(c.result, at(`the result of choice ${c.name} of ${owner}`)),
      selfBinderInternedStr: tables.string('self'),
    });
  return create(ModuleSchema, {
    nameInternedDname: tables.dotted(m.name, 'a module name'),
    dataTypes: dataTypes.map((d) => encodeDataType(d, tables, at, type)),
    synonyms: m.synonyms.map((s) =>
      create(DefTypeSynSchema, {
        nameInternedDname: tables.dotted(s.name, at('a type synonym name')),
        params: params(s.params, [s.type], tables),
        type: type(s.type, at(`type synonym ${s.name}`)),
      }),
    ),
    templates: m.templates.map((t) =>
      create(DefTemplateSchema, {
        tyconInternedDname: tables.dotted(t.name, at('a template name')),
        paramInternedStr: tables.string('this'),
        choices: t.choices.map((c) => choice(c, `template ${t.name}`)),
        ...(t.key === null ? {} : { key: { type: type(t.key, at(`the key of ${t.name}`)) } }),
        implements: t.implements.map((ref) => {
          checkRef(ref, at(`template ${t.name}'s interface`));
          return {
            interface: tables.typeConId(ref, at(`template ${t.name}'s interface`)),
            body: {},
          };
        }),
      }),
    ),
    interfaces: m.interfaces.map((i) =>
      create(DefInterfaceSchema, {
        tyconInternedDname: tables.dotted(i.name, at('an interface name')),
        paramInternedStr: tables.string('this'),
        choices: i.choices.map((c) => choice(c, `interface ${i.name}`)),
        view: type(i.view, at(`the view of ${i.name}`)),
        requires: i.requires.map((ref) => {
          checkRef(ref, at(`interface ${i.name}'s required interface`));
          return tables.typeConId(ref, at(`interface ${i.name}'s required interface`));
        }),
      }),
    ),
  });
}

function encodeDataType(
  d: DataTypeSignature,
  tables: InternTables,
  at: (what: string) => string,
  type: (t: DamlType, what: string) => ReturnType<InternTables['type']>,
): DefDataType {
  const fields = (list: readonly { name: string; type: DamlType }[]) =>
    list.map((f) => ({
      fieldInternedStr: tables.string(f.name),
      type: type(f.type, at(`${d.name}.${f.name}`)),
    }));
  const shape = d.shape;
  const types =
    shape.kind === 'record' ? shape.fields : shape.kind === 'variant' ? shape.constructors : [];
  return create(DefDataTypeSchema, {
    nameInternedDname: tables.dotted(d.name, at('a data type name')),
    params: params(
      d.params,
      types.map((f) => f.type),
      tables,
    ),
    serializable: d.serializable,
    DataCons:
      shape.kind === 'record'
        ? { case: 'record', value: { fields: fields(shape.fields) } }
        : shape.kind === 'variant'
          ? { case: 'variant', value: { fields: fields(shape.constructors) } }
          : shape.kind === 'enum'
            ? {
                case: 'enum',
                value: { constructorsInternedStr: shape.constructors.map((c) => tables.string(c)) },
              }
            : { case: 'interface', value: {} },
  });
}

/** Type parameters with their kinds: `nat` for one used as a `Numeric` scale, else `*`. */
function params(
  names: readonly string[],
  types: readonly DamlType[],
  tables: InternTables,
): TypeVarWithKind[] {
  const nat = new Set<string>();
  const visit = (t: DamlType): void => {
    if (t.kind === 'Numeric' && typeof t.scale !== 'number') nat.add(t.scale.var);
    childTypes(t).forEach(visit);
  };
  types.forEach(visit);
  return names.map((name) =>
    create(TypeVarWithKindSchema, {
      varInternedStr: tables.string(name),
      kind: { Sum: nat.has(name) ? { case: 'nat', value: {} } : { case: 'star', value: {} } },
    }),
  );
}

function forEachRef(t: DamlType, f: (ref: TypeConRef) => void): void {
  if (t.kind === 'Con') f(t.ref);
  for (const c of childTypes(t)) forEachRef(c, f);
}
