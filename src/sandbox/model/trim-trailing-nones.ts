import type { DamlType } from './model-types.js';

/** Per type: whether some record in it has an Optional field (else trimming changes nothing). */
const trimmable = new WeakMap<DamlType, boolean>();

function hasOptionalField(type: DamlType): boolean {
  const known = trimmable.get(type);
  if (known !== undefined) return known;
  // A recursive (DAR) type comes back here: assume it may need trimming, which is only slower.
  trimmable.set(type, true);
  let result: boolean;
  switch (type.kind) {
    case 'Optional':
    case 'List':
    case 'TextMap':
      result = hasOptionalField(type.of);
      break;
    case 'GenMap':
      result = hasOptionalField(type.key) || hasOptionalField(type.value);
      break;
    case 'Record':
      result = type.fields.some((f) => f.type.kind === 'Optional' || hasOptionalField(f.type));
      break;
    case 'Variant':
      result = type.constructors.some((c) => hasOptionalField(c.type));
      break;
    default:
      result = false;
  }
  trimmable.set(type, result);
  return result;
}

function trim(type: DamlType, value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  switch (type.kind) {
    case 'Optional':
      // Nested Optionals are arrays; a simple one holds its value directly.
      return type.of.kind === 'Optional'
        ? (value as unknown[]).map((v) => trim(type.of, v))
        : trim(type.of, value);
    case 'List':
      return (value as unknown[]).map((v) => trim(type.of, v));
    case 'TextMap': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = trim(type.of, v);
      return out;
    }
    case 'GenMap':
      return (value as [unknown, unknown][]).map(([k, v]) => [
        trim(type.key, k),
        trim(type.value, v),
      ]);
    case 'Variant': {
      const v = value as { tag: string; value: unknown };
      const ctor = type.constructors.find((c) => c.name === v.tag);
      return ctor === undefined ? v : { tag: v.tag, value: trim(ctor.type, v.value) };
    }
    case 'Record': {
      const record = value as Record<string, unknown>;
      let last = type.fields.length - 1;
      while (last >= 0 && (record[type.fields[last]!.name] ?? null) === null) last--;
      const out: Record<string, unknown> = {};
      for (let i = 0; i <= last; i++) {
        const f = type.fields[i]!;
        out[f.name] = trim(f.type, record[f.name] ?? null);
      }
      return out;
    }
    default:
      return value;
  }
}

/**
 * A canonical value as Canton sends it (`removeTrailingNonesInRecords`): every record, however
 * deep, leaves out its trailing fields that are None (`null`); a None before a field with a value
 * stays `null`. Nested Optionals' None is `[]`, not null, and stays. Values without a record with
 * an Optional field come back as they are (the same object).
 */
export function trimTrailingNones(type: DamlType, value: unknown): unknown {
  return hasOptionalField(type) ? trim(type, value) : value;
}
