import type { DamlType } from '../model/model-types.js';

/**
 * Every party in a normalised value of `type`, at any depth (records, variants, lists,
 * Optionals, maps, keys included), in the order met. What a template without a model has
 * instead of signatory and observer declarations.
 */
export function argumentParties(type: DamlType, value: unknown, out: string[] = []): string[] {
  if (value === null || value === undefined) return out;
  switch (type.kind) {
    case 'Party':
      if (typeof value === 'string') out.push(value);
      break;
    case 'Optional':
      if (type.of.kind === 'Optional') {
        for (const v of value as unknown[]) argumentParties(type.of, v, out);
      } else argumentParties(type.of, value, out);
      break;
    case 'List':
      for (const v of value as unknown[]) argumentParties(type.of, v, out);
      break;
    case 'TextMap':
      for (const v of Object.values(value as Record<string, unknown>)) {
        argumentParties(type.of, v, out);
      }
      break;
    case 'GenMap':
      for (const [k, v] of value as [unknown, unknown][]) {
        argumentParties(type.key, k, out);
        argumentParties(type.value, v, out);
      }
      break;
    case 'Record':
      for (const f of type.fields) {
        argumentParties(f.type, (value as Record<string, unknown>)[f.name], out);
      }
      break;
    case 'Variant': {
      const v = value as { tag: string; value: unknown };
      const ctor = type.constructors.find((c) => c.name === v.tag);
      if (ctor !== undefined) argumentParties(ctor.type, v.value, out);
      break;
    }
    default:
      break;
  }
  return out;
}
