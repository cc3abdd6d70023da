import type { DamlType } from '../daml-lf/daml-type.js';
import type { PackageCatalogue, ResolvedType } from '../daml-lf/package-catalogue.js';
import type { CompiledValue, DamlRendering } from './compiled-rule.js';

/**
 * A command value (createArguments, choiceArgument, contractKey) with the Daml type of each of
 * its `${{ }}` values attached as `rendering`, so that render-value.ts sends a timestamp in a
 * Date field as its day, a decimal in an Int as a whole number, a decimal in a `Numeric n` with
 * n places. Resolved once, when the rule is loaded: sending a command looks nothing up.
 *
 * It walks the value as check-command-value.ts checks it (records, variants with a literal tag,
 * lists, a Map's [key, value] pairs, TextMaps, Optionals, nested Optionals as lists), so every
 * `${{ }}` that the check accepts for a Date, Time, Int or Numeric field is sent as one.
 */
export function withDamlRendering(
  catalogue: PackageCatalogue,
  value: CompiledValue,
  type: DamlType,
): CompiledValue {
  return attach(new Renderings(catalogue), value, type);
}

function attach(r: Renderings, value: CompiledValue, type: DamlType): CompiledValue {
  if (value.kind === 'literal' || value.kind === 'interpolation') return value;
  if (value.kind === 'expression') {
    const rendering = r.of(type);
    return rendering === null ? value : { ...value, rendering };
  }
  const resolved = r.catalogue.resolve(type);
  switch (resolved.kind) {
    case 'Optional':
      return resolved.of.kind === 'Optional'
        ? attachNested(r, value, resolved)
        : attach(r, value, resolved.of);
    case 'List':
      return value.kind === 'list'
        ? { ...value, items: value.items.map((item) => attach(r, item, resolved.of)) }
        : value;
    case 'GenMap':
      if (value.kind !== 'list') return value;
      return {
        ...value,
        items: value.items.map((item) =>
          item.kind === 'list' && item.items.length === 2
            ? {
                ...item,
                items: [
                  attach(r, item.items[0]!, resolved.key),
                  attach(r, item.items[1]!, resolved.value),
                ],
              }
            : item,
        ),
      };
    case 'Record':
    case 'TextMap':
    case 'Variant':
      return value.kind === 'record' ? attachFields(r, value, resolved) : value;
    default:
      return value;
  }
}

function attachFields(
  r: Renderings,
  value: Extract<CompiledValue, { kind: 'record' }>,
  resolved: Extract<ResolvedType, { kind: 'Record' | 'TextMap' | 'Variant' }>,
): CompiledValue {
  const typeOf = (name: string): DamlType | undefined => {
    switch (resolved.kind) {
      case 'Record':
        return resolved.fields.find((f) => f.name === name)?.type;
      case 'TextMap':
        return resolved.of;
      case 'Variant': {
        if (name !== 'value') return undefined;
        const tag = value.fields.find((f) => f.name === 'tag')?.value;
        if (tag?.kind !== 'literal' || typeof tag.value !== 'string') return undefined;
        return resolved.constructors.find((c) => c.name === tag.value)?.type;
      }
    }
  };
  return {
    ...value,
    fields: value.fields.map((field) => {
      const type = typeOf(field.name);
      return type === undefined ? field : { ...field, value: attach(r, field.value, type) };
    }),
  };
}

/** `Optional (Optional a)`: a list of zero or one item at every level (Canton's JSON). */
function attachNested(
  r: Renderings,
  value: CompiledValue,
  resolved: Extract<ResolvedType, { kind: 'Optional' }>,
): CompiledValue {
  if (value.kind !== 'list' || value.items.length !== 1) return value;
  const inner = value.items[0]!;
  const of = r.catalogue.resolve(resolved.of);
  const item = of.kind === 'Optional' ? attachNested(r, inner, of) : attach(r, inner, resolved.of);
  return { ...value, items: [item] };
}

const DATE: DamlRendering = { kind: 'Date' };
const TIME: DamlRendering = { kind: 'Time' };
const INT: DamlRendering = { kind: 'Int' };

/** The renderings of the types of one command value: each record or variant type once. */
class Renderings {
  readonly catalogue: PackageCatalogue;
  readonly #known = new Map<string, DamlRendering | null>();
  readonly #inProgress = new Set<string>();

  constructor(catalogue: PackageCatalogue) {
    this.catalogue = catalogue;
  }

  /** How a value of `type` is sent; null when nothing in it converts. */
  of(type: DamlType): DamlRendering | null {
    const resolved = this.catalogue.resolve(type);
    switch (resolved.kind) {
      case 'Date':
        return DATE;
      case 'Timestamp':
        return TIME;
      case 'Int64':
        return INT;
      case 'Numeric':
        return typeof resolved.scale === 'number'
          ? { kind: 'Numeric', scale: resolved.scale }
          : null;
      case 'Optional':
        // A nested Optional is a list at every level: a CEL value of it is sent as it is.
        if (resolved.of.kind === 'Optional') return null;
        return this.#wrap('Optional', resolved.of);
      case 'List':
      case 'TextMap':
        return this.#wrap(resolved.kind, resolved.of);
      case 'Record':
      case 'Variant':
        return this.#parts(type, resolved);
      default:
        return null;
    }
  }

  #wrap(kind: 'Optional' | 'List' | 'TextMap', of: DamlType): DamlRendering | null {
    const inner = this.of(of);
    return inner === null ? null : { kind, of: inner };
  }

  /**
   * A record's fields or a variant's constructors. A recursive type is described down to where
   * it repeats: below that, its values are sent as they are.
   */
  #parts(
    type: DamlType,
    resolved: Extract<ResolvedType, { kind: 'Record' | 'Variant' }>,
  ): DamlRendering | null {
    const key = JSON.stringify(type);
    const known = this.#known.get(key);
    if (known !== undefined) return known;
    if (this.#inProgress.has(key)) return null;
    this.#inProgress.add(key);
    const parts = new Map<string, DamlRendering>();
    for (const f of resolved.kind === 'Record' ? resolved.fields : resolved.constructors) {
      const rendering = this.of(f.type);
      if (rendering !== null) parts.set(f.name, rendering);
    }
    this.#inProgress.delete(key);
    const out: DamlRendering | null = parts.size === 0 ? null : { kind: resolved.kind, parts };
    this.#known.set(key, out);
    return out;
  }
}
