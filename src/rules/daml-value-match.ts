import { CelDecimal } from './cel/cel-decimal.js';
import {
  catalogueEntriesOf,
  type CatalogueField,
  type CatalogueType,
  type PackageCatalogue,
} from './package-catalogue.js';
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

/** A Daml scalar type's name from the catalogue, when it is one the comparison knows. */
function scalarName(type: CatalogueType | undefined): string | undefined {
  if (type === undefined) return undefined;
  const t = type.kind === 'optional' ? type.of : type;
  return t.kind === 'other' ? t.daml : undefined;
}

/**
 * Whether an expected scalar matches an actual one. With `type` (the catalogue's): Numeric and
 * Int64 by decimal value, Time by instant, anything else as written (a number written for text
 * still matches its text). Without: a number matches text of the same decimal value (Daml
 * numbers travel as text), two timestamps match when they are the same instant, and two texts
 * that are both decimals, one with a fraction, match by value.
 */
export function sameDamlScalar(expected: unknown, actual: unknown, type?: CatalogueType): boolean {
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

/** The type a field of a record type has; undefined when it is not known. */
export function fieldType(
  type: CatalogueType | undefined,
  name: string | number,
): CatalogueType | undefined {
  if (type === undefined) return undefined;
  const t = type.kind === 'optional' ? type.of : type;
  if (typeof name === 'number') return t.kind === 'list' ? t.of : undefined;
  if (t.kind === 'record') return t.fields.find((f) => f.name === name)?.type;
  if (t.kind === 'textMap') return t.of;
  return undefined;
}

/**
 * The type of a command field holding a Daml value (`createArguments`, `choiceArgument`,
 * `contractKey`) of the template `templateId` names, from the catalogue; undefined when the
 * catalogue does not know it, or the versions it knows disagree.
 */
export function commandFieldType(
  catalogue: PackageCatalogue | undefined,
  templateId: unknown,
  field: string,
  choice: unknown,
): CatalogueType | undefined {
  if (catalogue === undefined || typeof templateId !== 'string') return undefined;
  const ref = parseTemplateRef(templateId);
  if (ref === null) return undefined;
  const entries = catalogueEntriesOf(catalogue, ref);
  if (entries.length !== 1) return undefined;
  const entry = entries[0]!;
  const record = (fields: readonly CatalogueField[] | undefined): CatalogueType | undefined =>
    fields === undefined ? undefined : { kind: 'record', fields };
  switch (field) {
    case 'createArguments':
      return record(entry.fields);
    case 'choiceArgument':
      return typeof choice === 'string' ? record(entry.choiceArguments?.[choice]) : undefined;
    case 'contractKey':
      return entry.keyType;
    default:
      return undefined;
  }
}
