import { CelDecimal } from '../../rules/cel/cel-decimal.js';
import type { DamlType } from './model-types.js';
import { parseTimestamp } from './daml-time.js';

/** Text as Daml orders it: by code point (UTF-8 byte order), not by UTF-16 unit. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return x.length - y.length < 0 ? -1 : x.length === y.length ? 0 : 1;
}

const sign = (n: number | bigint): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

function compareLists(type: DamlType, a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareDamlValues(type, a[i], b[i]);
    if (c !== 0) return c;
  }
  return sign(a.length - b.length);
}

/**
 * Daml's total order on two normalised values of `type` (what `normalizeDamlValue` returns):
 * the order a `Map k v` (GenMap) keeps its keys in, so the sandbox sends its entries as Canton
 * does. Numbers by value, Text by code point, Time by instant, enums and variants by
 * constructor position, records field by field, None before Some, lists and maps element by
 * element.
 */
export function compareDamlValues(type: DamlType, a: unknown, b: unknown): number {
  switch (type.kind) {
    case 'Int64':
      return sign(BigInt(a as string) - BigInt(b as string));
    case 'Numeric':
      return sign(CelDecimal.parse(a as string)!.compare(CelDecimal.parse(b as string)!));
    case 'Text':
    case 'Party':
    case 'ContractId':
    case 'Date':
      return compareText(a as string, b as string);
    case 'Timestamp':
      return sign(parseTimestamp(a as string)! - parseTimestamp(b as string)!);
    case 'Bool':
      return sign(Number(a) - Number(b));
    case 'Unit':
    case 'Unsupported':
      return 0;
    case 'Enum':
      return sign(type.constructors.indexOf(a as string) - type.constructors.indexOf(b as string));
    case 'Variant': {
      const x = a as { tag: string; value: unknown };
      const y = b as { tag: string; value: unknown };
      const ix = type.constructors.findIndex((c) => c.name === x.tag);
      const iy = type.constructors.findIndex((c) => c.name === y.tag);
      if (ix !== iy) return sign(ix - iy);
      return compareDamlValues(type.constructors[ix]!.type, x.value, y.value);
    }
    case 'Record': {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      for (const f of type.fields) {
        const c = compareDamlValues(f.type, x[f.name] ?? null, y[f.name] ?? null);
        if (c !== 0) return c;
      }
      return 0;
    }
    case 'Optional': {
      if (type.of.kind === 'Optional') {
        // Nested Optionals are arrays: [] is None, [x] is Some x.
        return compareLists(type.of, a as unknown[], b as unknown[]);
      }
      if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
      return compareDamlValues(type.of, a, b);
    }
    case 'List':
      return compareLists(type.of, a as unknown[], b as unknown[]);
    case 'TextMap': {
      const x = Object.entries(a as Record<string, unknown>);
      const y = Object.entries(b as Record<string, unknown>);
      const pair: DamlType = {
        kind: 'Record',
        fields: [
          { name: '0', type: { kind: 'Text' } },
          { name: '1', type: type.of },
        ],
      };
      return compareLists(pair, x, y);
    }
    case 'GenMap': {
      const pair: DamlType = {
        kind: 'Record',
        fields: [
          { name: '0', type: type.key },
          { name: '1', type: type.value },
        ],
      };
      return compareLists(pair, a as unknown[], b as unknown[]);
    }
  }
}
