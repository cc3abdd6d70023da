import type { DamlType, TypeConRef } from '../../daml-lf/daml-type.js';
import type {
  ChoiceSignature,
  DataTypeShape,
  DataTypeSignature,
  FieldSignature,
  InterfaceSignature,
  ModuleSignature,
  PackageSignature,
  TemplateSignature,
} from '../../daml-lf/package-signature.js';
import type {
  ChoiceDef,
  DamlType as ModelType,
  FieldDef,
  InterfaceDef,
  PackageModel,
  TemplateDef,
} from './model-types.js';

/**
 * A sandbox model file as the package signature a Daml compiler would have produced for it, so
 * rules are checked against a model's types and a DAR's with one checker.
 *
 * Naming, Daml-like and stable (the same file gives the same names):
 * - a template `M:E` has the record `M:E` (its fields), as in Daml;
 * - an interface `M:I` has the interface data type `M:I`, and its view the record `M:I.View`;
 * - a choice `C`'s argument is the record `M:C`, as in Daml (an interface's choice too); when
 *   two templates or interfaces of one module have a choice `C`, each gets `M:E.C` instead (Daml
 *   refuses that module, a model may have it);
 *   every `Archive` of the module shares one empty record `M:Archive`;
 * - an inline record or enum (a YAML map of fields, `{enum: […]}`) is named after where it is
 *   written: `<owner>.<slot>`, the owner being the record or choice around it (`E`, `C`,
 *   `I.View`, …) and the slot the field name, `Key` for a key type and `Result` for a choice's
 *   `returns` (a variant's constructor is a slot too; a GenMap's key and value are
 *   `<slot>.Key` and `<slot>.Value`); a list, Optional or TextMap of it adds nothing (`Order.lines` for `lines:
 *   List {…}`). `Order.item.inner` is a record inside a record;
 * - a name that is taken already gets `_2`, `_3`, … appended.
 * `ContractId` without a template is `ContractId` of an `Unsupported` type ("any template").
 * Choice results without a declared `returns` are `Unit` when the choice has no `result`, else
 * `Unsupported` (the model does not say).
 *
 * A template implementing another package's interface refers to it by that package's id, which
 * is then among the `dependencies`. The package id is the model's own (`packageId` of
 * PackageModel; `''` in the draft whose archive gives the id, see modelArchive); `lfVersion`
 * is "model".
 */
export function modelSignature(model: PackageModel): PackageSignature {
  const modules = new Map<string, ModuleBuilder>();
  const moduleOf = (name: string): ModuleBuilder => {
    let m = modules.get(name);
    if (m === undefined) {
      m = new ModuleBuilder(model.packageId, name);
      modules.set(name, m);
    }
    return m;
  };
  // Fixed names first, so synthetic ones never take a template's or an interface's name.
  for (const t of model.templates.values()) moduleOf(t.moduleName).claimExact(t.entityName);
  for (const i of model.interfaces.values()) {
    const [module, name] = split(i.qualifiedName);
    moduleOf(module).claimExact(name);
  }
  const choiceCounts = new Map<string, number>();
  const count = (module: string, choice: string): void => {
    const k = `${module}:${choice}`;
    choiceCounts.set(k, (choiceCounts.get(k) ?? 0) + 1);
  };
  for (const t of model.templates.values()) {
    for (const c of t.choices.keys()) count(t.moduleName, c);
  }
  for (const i of model.interfaces.values()) {
    for (const c of i.choices.keys()) count(split(i.qualifiedName)[0], c);
  }
  const shared = (module: string, choice: string): boolean =>
    choice !== 'Archive' && (choiceCounts.get(`${module}:${choice}`) ?? 0) > 1;
  for (const i of model.interfaces.values()) {
    const [module, name] = split(i.qualifiedName);
    moduleOf(module).addInterface(name, i, (choice) => shared(module, choice));
  }
  const dependencies = new Set<string>();
  for (const t of model.templates.values()) {
    moduleOf(t.moduleName).addTemplate(t, (choice) => shared(t.moduleName, choice));
    for (const i of t.implements.values()) {
      if (i.interface.packageId !== model.packageId) dependencies.add(i.interface.packageId);
    }
  }
  return Object.freeze({
    packageId: model.packageId,
    name: model.name,
    version: model.version,
    lfVersion: 'model',
    modules: [...modules.values()].map((m) => m.build()),
    dependencies: [...dependencies].sort(),
  });
}

function split(qualifiedName: string): [string, string] {
  const colon = qualifiedName.indexOf(':');
  return [qualifiedName.slice(0, colon), qualifiedName.slice(colon + 1)];
}

class ModuleBuilder {
  readonly #packageId: string;
  readonly #name: string;
  readonly #taken = new Set<string>();
  readonly #dataTypes: DataTypeSignature[] = [];
  readonly #templates: TemplateSignature[] = [];
  readonly #interfaces: InterfaceSignature[] = [];
  #archive: TypeConRef | undefined;

  constructor(packageId: string, name: string) {
    this.#packageId = packageId;
    this.#name = name;
  }

  claimExact(name: string): void {
    this.#taken.add(name);
  }

  /** `preferred`, or it with the first free `_n` suffix. */
  #claim(preferred: string): string {
    let name = preferred;
    for (let n = 2; this.#taken.has(name); n++) name = `${preferred}_${n}`;
    this.#taken.add(name);
    return name;
  }

  #ref(name: string): TypeConRef {
    return { packageId: this.#packageId, module: this.#name, name };
  }

  /** Declares a serializable data type of the module; its reference. */
  #declare(name: string, shape: DataTypeShape): TypeConRef {
    this.#dataTypes.push({ name, params: [], serializable: true, shape });
    return this.#ref(name);
  }

  #record(name: string, fields: readonly FieldSignature[]): TypeConRef {
    return this.#declare(name, { kind: 'record', fields });
  }

  /** The record type of a field list, declared under `name` (already claimed). */
  #fieldsRecord(name: string, fields: readonly FieldDef[]): TypeConRef {
    return this.#record(name, this.#fields(name, fields));
  }

  #fields(owner: string, fields: readonly FieldDef[]): FieldSignature[] {
    return fields.map((f) => ({ name: f.name, type: this.#type(f.type, `${owner}.${f.name}`) }));
  }

  /** A model type; inline records and enums become data types named `slot`. */
  #type(type: ModelType, slot: string): DamlType {
    switch (type.kind) {
      case 'Numeric':
        return { kind: 'Numeric', scale: type.scale };
      case 'ContractId':
        return {
          kind: 'ContractId',
          of:
            type.template === null
              ? { kind: 'Unsupported', text: 'any template' }
              : this.#conOf(type.template),
        };
      case 'Optional':
      case 'List':
      case 'TextMap':
        return { kind: type.kind, of: this.#type(type.of, slot) };
      case 'Enum': {
        const ref = this.#declare(this.#claim(slot), {
          kind: 'enum',
          constructors: type.constructors,
        });
        return { kind: 'Con', ref, args: [] };
      }
      case 'Record': {
        const name = this.#claim(slot);
        return { kind: 'Con', ref: this.#fieldsRecord(name, type.fields), args: [] };
      }
      case 'GenMap':
        return {
          kind: 'GenMap',
          key: this.#type(type.key, `${slot}.Key`),
          value: this.#type(type.value, `${slot}.Value`),
        };
      case 'Variant': {
        const name = this.#claim(slot);
        const constructors = this.#fields(name, type.constructors);
        return {
          kind: 'Con',
          ref: this.#declare(name, { kind: 'variant', constructors }),
          args: [],
        };
      }
      case 'Unsupported':
        return { kind: 'Unsupported', text: type.text };
      case 'Party':
      case 'Text':
      case 'Int64':
      case 'Bool':
      case 'Date':
      case 'Timestamp':
      case 'Unit':
        return { kind: type.kind };
    }
  }

  /** A `Module:Entity` of this package (models refer only to their own templates). */
  #conOf(qualifiedName: string): DamlType {
    const [module, name] = split(qualifiedName);
    return { kind: 'Con', ref: { packageId: this.#packageId, module, name }, args: [] };
  }

  addInterface(name: string, def: InterfaceDef, sharedChoice: (choice: string) => boolean): void {
    this.#dataTypes.push({ name, params: [], serializable: false, shape: { kind: 'interface' } });
    this.#interfaces.push({
      name,
      view: this.#type(def.viewType, `${name}.View`),
      choices: [...def.choices.values()].map((c) => this.#choice(name, c, sharedChoice(c.name))),
      requires: [],
    });
  }

  addTemplate(t: TemplateDef, sharedChoice: (choice: string) => boolean): void {
    const name = t.entityName;
    const fields = this.#fields(name, t.fields);
    this.#record(name, fields);
    const choices = [...t.choices.values()].map((c) => this.#choice(name, c, sharedChoice(c.name)));
    this.#templates.push({
      name,
      fields,
      choices,
      key: t.key === null ? null : this.#type(t.key.type, `${name}.Key`),
      implements: [...t.implements.values()].map(({ interface: i }) => {
        const [module, entity] = split(i.qualifiedName);
        return { packageId: i.packageId, module, name: entity };
      }),
    });
  }

  /** A template's choice, or an interface's (whose result type is always declared). */
  #choice(
    template: string,
    c: Pick<ChoiceDef, 'name' | 'consuming' | 'argument' | 'returns'> & {
      readonly result?: ChoiceDef['result'];
    },
    shared: boolean,
  ): ChoiceSignature {
    let argument: TypeConRef;
    let owner: string;
    if (c.name === 'Archive') {
      this.#archive ??= this.#record(this.#claim('Archive'), []);
      argument = this.#archive;
      owner = argument.name;
    } else {
      owner = this.#claim(shared ? `${template}.${c.name}` : c.name);
      argument = this.#fieldsRecord(owner, c.argument);
    }
    const result: DamlType =
      c.returns !== null
        ? this.#type(c.returns, `${owner}.Result`)
        : (c.result ?? null) === null
          ? { kind: 'Unit' }
          : { kind: 'Unsupported', text: 'not declared (no `returns:`)' };
    return {
      name: c.name,
      consuming: c.consuming,
      argument: { kind: 'Con', ref: argument, args: [] },
      result,
    };
  }

  build(): ModuleSignature {
    return {
      name: this.#name,
      dataTypes: this.#dataTypes,
      synonyms: [],
      templates: this.#templates,
      interfaces: this.#interfaces,
    };
  }
}
