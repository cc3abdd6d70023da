import type { DamlType, FieldDef } from './model-types.js';

const recordTypes = new WeakMap<readonly FieldDef[], DamlType>();

/**
 * The record type of a field list, one object per list: the value codecs cache their work per
 * type object, so a fresh `{ kind: 'Record' }` per call would miss every time.
 */
export function recordType(fields: readonly FieldDef[]): DamlType {
  let type = recordTypes.get(fields);
  if (type === undefined) {
    type = { kind: 'Record', fields };
    recordTypes.set(fields, type);
  }
  return type;
}
