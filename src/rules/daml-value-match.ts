import type { DamlType } from '../daml-lf/daml-type.js';
import type { PackageCatalogue } from '../daml-lf/package-catalogue.js';
import { commandValueType } from './catalogue-refs.js';
import { CelDecimal } from './cel/cel-decimal.js';
import { parseTemplateRef } from './parse-template-ref.js';

/**
 * Rule-test expectations compare Daml values by what they mean, not by their text: the same
 * instant written `…04Z` or `…04.000Z`, the same decimal `1000.0` or `1000.0000000000`. By the
 * Daml type when the catalogue (a model) gives it; otherwise only when both sides parse as the
 * same kind, so a Text that happens to look like a number is still compared as text.
 */

/** `yyyy-mm-ddThh:mm[:ss[.fraction]]` with `Z` or an offset: a Daml Time as text. */
const TIMESTAMP =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;
const DECIMAL = /^[+-]?\d+(?:\.\d+)?$/;

/** The instant in microseconds (Daml Time's precision), or null. */
export function instantOf(text: string): bigint | null {
  const m = TIMESTAMP.exec(text);
  if (m === null) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return null;
  const fraction = (m[2] ?? '').padEnd(9, '0');
  if (/[1-9]/.test(fraction.slice(6))) return null; // finer than a microsecond: not a Daml Time
  return BigInt(ms) * 1000n + BigInt(fraction.slice(0, 6));
}

function decimalOf(x: unknown): CelDecimal | null {
  if (typeof x === 'number') return CelDecimal.fromNumber(x);
  if (typeof x === 'string' && DECIMAL.test(x.trim())) return CelDecimal.parse(x.trim());
  return null;
}

/** A Daml type with the catalogue that can resolve its data types. */
export type KnownType = { readonly catalogue: PackageCatalogue; readonly type: DamlType };

/** The type itself, or what an `Optional` of it holds; data types resolved. */
function unwrapped(known: KnownType) {
  const t = known.catalogue.resolve(known.type);
  return t.kind === 'Optional' && t.of.kind !== 'Optional' ? known.catalogue.resolve(t.of) : t;
}

/** A Daml scalar type's name from the catalogue, when it is one the comparison knows. */
function scalarName(known: KnownType | undefined): string | undefined {
  if (known === undefined) return undefined;
  const t = unwrapped(known);
  switch (t.kind) {
    case 'Record':
    case 'Variant':
    case 'List':
    case 'TextMap':
    case 'GenMap':
    case 'Optional':
    case 'Interface':
    case 'Unknown':
    case 'Var':
    case 'Nat':
    case 'Unsupported':
      return undefined;
    default:
      return t.kind;
  }
}

/**
 * Whether an expected scalar matches an actual one. With `type` (the catalogue's): Numeric and
 * Int64 by decimal value, Time by instant, anything else as written (a number written for text
 * still matches its text). Without: a number matches text of the same decimal value (Daml
 * numbers travel as text), two timestamps match when they are the same instant, and two texts
 * that are both decimals, one with a fraction, match by value.
 */
export function sameDamlScalar(expected: unknown, actual: unknown, type?: KnownType): boolean {
  if (expected === actual) return true;
  const name = scalarName(type);
  const byDecimal = (): boolean => {
    const a = decimalOf(expected);
    const b = decimalOf(actual);
    return a !== null && b !== null && a.compare(b) === 0;
  };
  const byInstant = (): boolean => {
    if (typeof expected !== 'string' || typeof actual !== 'string') return false;
    const a = instantOf(expected);
    return a !== null && a === instantOf(actual);
  };
  if (name === 'Numeric' || name === 'Int64') return byDecimal();
  if (name === 'Timestamp') return byInstant();
  if (typeof expected === 'number' || typeof actual === 'number') return byDecimal();
  if (name !== undefined) return false;
  if (byInstant()) return true;
  return (
    typeof expected === 'string' &&
    typeof actual === 'string' &&
    (expected.includes('.') || actual.includes('.')) &&
    byDecimal()
  );
}

/** What a value is, for a diff: `number`, `text`, `timestamp text`, `decimal text`, … */
export function valueKind(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') {
    if (instantOf(value) !== null) return 'timestamp text';
    if (DECIMAL.test(value)) return 'decimal text';
    if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date text';
    return 'text';
  }
  if (typeof value === 'object') return 'record';
  return typeof value; // number, boolean
}

/** The type a field (or, by number, a list item) of `known` has; undefined when not known. */
export function fieldType(
  known: KnownType | undefined,
  name: string | number,
): KnownType | undefined {
  if (known === undefined) return undefined;
  const t = unwrapped(known);
  const of = (type: DamlType | undefined): KnownType | undefined =>
    type === undefined ? undefined : { catalogue: known.catalogue, type };
  if (typeof name === 'number') return t.kind === 'List' ? of(t.of) : undefined;
  if (t.kind === 'Record') return of(t.fields.find((f) => f.name === name)?.type);
  if (t.kind === 'TextMap') return of(t.of);
  return undefined;
}

/**
 * The type of a command field holding a Daml value (`createArguments`, `choiceArgument`,
 * `contractKey`) of the template (or interface) `templateId` names, from the catalogue;
 * undefined when the catalogue does not know it, or knows several versions of it.
 */
export function commandFieldType(
  catalogue: PackageCatalogue | undefined,
  templateId: unknown,
  field: string,
  choice: unknown,
): KnownType | undefined {
  if (catalogue === undefined || typeof templateId !== 'string') return undefined;
  const ref = parseTemplateRef(templateId);
  if (ref === null) return undefined;
  const entries = catalogue.entries(ref);
  if (entries.length !== 1) return undefined;
  const type = commandValueType(entries[0]!, field, choice);
  return type === null ? undefined : { catalogue, type };
}
