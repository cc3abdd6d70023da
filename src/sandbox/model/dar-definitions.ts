import type { DamlType as LfType, TypeConRef } from '../../daml-lf/daml-type.js';
import type { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import type {
  ChoiceSignature,
  PackageSignature,
  TemplateSignature,
} from '../../daml-lf/package-signature.js';
import type {
  ChoiceDef,
  FieldDef,
  InterfaceChoiceDef,
  InterfaceDef,
  InterfaceInstanceDef,
  PackageModel,
  TemplateDef,
} from './model-types.js';
import { ValueTypes } from './value-types.js';

const byCatalogue = new WeakMap<PackageCatalogue, DarDefinitions>();

/** The implicit `Archive`: consuming, no argument, controlled by the contract's signatories. */
export function archiveChoice(controllers: ChoiceDef['controllers']): ChoiceDef {
  return {
    name: 'Archive',
    consuming: true,
    controllers,
    observers: [],
    argument: [],
    body: [],
    result: null,
    returns: { kind: 'Unit' },
    implemented: true,
  };
}

/** A choice with the types a package declares and no behaviour: exercising it fails. */
export function unimplementedChoice(
  name: string,
  types: Pick<ChoiceDef, 'consuming' | 'argument' | 'returns'>,
): ChoiceDef {
  return {
    name,
    ...types,
    controllers: [],
    observers: [],
    body: [],
    result: null,
    implemented: false,
  };
}

/**
 * The sandbox's definitions of the templates and interfaces of a catalogue's packages (DARs'),
 * as far as a package signature says: field, argument, view and result types, which interfaces a
 * template implements. What a package's code would do (signatories, ensure, keys, views, choice
 * bodies) is not in a signature; a model gives it (compileModel), and without one a template
 * behaves as `TemplateDef.behaviour: 'none'` says. One instance per catalogue (`of`), so each
 * interface and template is made once.
 */
export class DarDefinitions {
  readonly catalogue: PackageCatalogue;
  readonly types: ValueTypes;
  readonly #interfaces = new Map<string, InterfaceDef>();

  private constructor(catalogue: PackageCatalogue) {
    this.catalogue = catalogue;
    this.types = new ValueTypes(catalogue);
  }

  static of(catalogue: PackageCatalogue): DarDefinitions {
    let defs = byCatalogue.get(catalogue);
    if (defs === undefined) {
      defs = new DarDefinitions(catalogue);
      byCatalogue.set(catalogue, defs);
    }
    return defs;
  }

  /** The fields of a choice argument (a record, as Daml makes them). */
  #argumentFields(argument: LfType): FieldDef[] {
    const t = this.types.of(argument);
    if (t.kind === 'Record') return [...t.fields];
    // Not something the Daml compiler writes: no command can give a value of it.
    return [
      {
        name: 'argument',
        type: { kind: 'Unsupported', text: `a choice argument of type ${argument.kind}` },
      },
    ];
  }

  #choiceTypes(c: ChoiceSignature): Omit<InterfaceChoiceDef, 'name'> {
    return {
      consuming: c.consuming,
      argument: this.#argumentFields(c.argument),
      returns: this.types.of(c.result),
    };
  }

  /** The interface a reference names, when the catalogue has it. */
  interfaceDef(ref: TypeConRef): InterfaceDef | undefined {
    const interfaceId = `${ref.packageId}:${ref.module}:${ref.name}`;
    const known = this.#interfaces.get(interfaceId);
    if (known !== undefined) return known;
    const entry = this.catalogue.entryOf(ref);
    if (entry?.kind !== 'interface') return undefined;
    const choices = new Map<string, InterfaceChoiceDef>();
    for (const c of entry.iface.choices)
      choices.set(c.name, { name: c.name, ...this.#choiceTypes(c) });
    const def: InterfaceDef = {
      packageId: ref.packageId,
      packageName: entry.pkg.name,
      qualifiedName: `${ref.module}:${ref.name}`,
      interfaceId,
      viewType: this.types.of(entry.iface.view),
      choices,
    };
    this.#interfaces.set(interfaceId, def);
    return def;
  }

  /**
   * An implementation of `iface` that computes no view and implements none of its choices but
   * `Archive` (the template's own, by the contract's signatories).
   */
  #emptyInstance(iface: InterfaceDef): InterfaceInstanceDef {
    const choices = new Map<string, ChoiceDef>();
    for (const c of iface.choices.values()) {
      choices.set(
        c.name,
        c.name === 'Archive'
          ? archiveChoice([{ kind: 'signatories' }])
          : unimplementedChoice(c.name, c),
      );
    }
    return { interface: iface, view: null, choices };
  }

  /** A DAR template as the sandbox runs it without a model (`behaviour: 'none'`). */
  template(pkg: PackageSignature, moduleName: string, t: TemplateSignature): TemplateDef {
    const choices = new Map<string, ChoiceDef>();
    for (const c of t.choices) {
      if (c.name !== 'Archive')
        choices.set(c.name, unimplementedChoice(c.name, this.#choiceTypes(c)));
    }
    choices.set('Archive', archiveChoice([{ kind: 'signatories' }]));
    const implementsMap = new Map<string, InterfaceInstanceDef>();
    for (const ref of t.implements) {
      const iface = this.interfaceDef(ref);
      if (iface !== undefined) implementsMap.set(iface.interfaceId, this.#emptyInstance(iface));
    }
    const qualifiedName = `${moduleName}:${t.name}`;
    return {
      packageId: pkg.packageId,
      packageName: pkg.name,
      qualifiedName,
      moduleName,
      entityName: t.name,
      templateId: `${pkg.packageId}:${qualifiedName}`,
      fields: this.types.fields(t.fields),
      behaviour: 'none',
      signatories: [],
      observers: [],
      ensure: null,
      key: null,
      choices,
      implements: implementsMap,
    };
  }

  /** Every template and interface of a DAR package, none described by a model. */
  packageModel(pkg: PackageSignature, file: string): PackageModel {
    const templates = new Map<string, TemplateDef>();
    const interfaces = new Map<string, InterfaceDef>();
    for (const m of pkg.modules) {
      for (const t of m.templates)
        templates.set(`${m.name}:${t.name}`, this.template(pkg, m.name, t));
      for (const i of m.interfaces) {
        const def = this.interfaceDef({ packageId: pkg.packageId, module: m.name, name: i.name });
        if (def !== undefined) interfaces.set(def.qualifiedName, def);
      }
    }
    return {
      file,
      name: pkg.name,
      version: pkg.version,
      packageId: pkg.packageId,
      templates,
      interfaces,
      source: 'dar',
      archive: null,
    };
  }
}
