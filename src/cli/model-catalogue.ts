import type {
  CatalogueField,
  CatalogueTemplate,
  CatalogueType,
} from '../rules/package-catalogue.js';
import type { DamlType, FieldDef, TemplateDef } from '../sandbox/model/model-types.js';

/** A sandbox model's template as the rule loader's catalogue describes it, fields included. */
export function catalogueTemplateOf(t: TemplateDef): CatalogueTemplate {
  return {
    packageName: t.packageName,
    packageId: t.packageId,
    module: t.moduleName,
    entity: t.entityName,
    choices: [...t.choices.keys()],
    hasKey: t.key !== null,
    fields: fieldsOf(t.fields),
    choiceArguments: Object.fromEntries(
      [...t.choices].map(([name, choice]) => [name, fieldsOf(choice.argument)]),
    ),
    ...(t.key === null ? {} : { keyType: typeOf(t.key.type) }),
  };
}

function fieldsOf(fields: readonly FieldDef[]): CatalogueField[] {
  return fields.map((f) => ({ name: f.name, type: typeOf(f.type) }));
}

function typeOf(type: DamlType): CatalogueType {
  switch (type.kind) {
    case 'Record':
      return { kind: 'record', fields: fieldsOf(type.fields) };
    case 'Optional':
      return { kind: 'optional', of: typeOf(type.of) };
    case 'List':
      return { kind: 'list', of: typeOf(type.of) };
    case 'TextMap':
      return { kind: 'textMap', of: typeOf(type.of) };
    default:
      return { kind: 'other', daml: type.kind };
  }
}
