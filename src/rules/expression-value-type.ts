import { showType, type DamlType } from '../daml-lf/daml-type.js';
import type { PackageCatalogue, ResolvedType } from '../daml-lf/package-catalogue.js';
import type { OperandType } from './expression-types.js';

/**
 * Whether a `${{ }}` value can be a command field of a Daml type, by the CEL type of the
 * expression (where known) and how render-value.ts sends it to a field of a known type (see
 * daml-rendering.ts): numbers and decimals become text (whole for an Int, rounded to the scale
 * for a Numeric), timestamps a Time's text or a Date's day, maps records, lists lists. Text is
 * sent as it is, so Daml text of another type (a Time for a Date) does not fit.
 */

/** What a value of the type is written as, for messages. */
export function expected(resolved: ResolvedType, type: DamlType): string {
  switch (resolved.kind) {
    case 'Record':
      return `a ${showType(type)} record (a mapping of its fields)`;
    case 'Variant':
      return `a ${showType(type)} variant ({tag: Constructor, value: …})`;
    case 'Enum':
      return `a ${showType(type)}: one of ${resolved.constructors.join(', ')}`;
    case 'List':
      return `a list (${showType(type)})`;
    case 'TextMap':
      return `a TextMap (a mapping of text to ${showType(resolved.of)})`;
    case 'GenMap':
      return `a Map (a list of [key, value] pairs)`;
    case 'Optional':
      return `an ${showType(type)} (a list: [] for None, [x] for Some x)`;
    case 'Unit':
      return 'Unit ({})';
    case 'Bool':
      return 'a Bool (true or false)';
    default:
      return `a ${showType(type)} (text)`;
  }
}

/** The CEL types a `${{ }}` may give for a value of a Daml type (see render-value.ts). */
function accepts(resolved: ResolvedType, t: OperandType): boolean {
  const daml = t.daml?.resolved.kind;
  switch (resolved.kind) {
    case 'Optional': // nested: a list; otherwise only a null got here (the rest is unwrapped)
      return resolved.of.kind === 'Optional' ? t.cel === 'list' : true;
    case 'Text':
      return ['string', 'int', 'uint', 'double', 'Decimal', 'timestamp'].includes(t.cel);
    case 'Party':
    case 'ContractId':
    case 'Enum':
      return t.cel === 'string';
    case 'Int64':
      return (
        ['string', 'int', 'uint', 'Decimal', 'double'].includes(t.cel) &&
        daml !== 'Numeric' &&
        daml !== 'Date' &&
        daml !== 'Timestamp'
      );
    case 'Numeric':
      return (
        ['string', 'int', 'uint', 'double', 'Decimal'].includes(t.cel) &&
        daml !== 'Date' &&
        daml !== 'Timestamp'
      );
    case 'Date':
      return (t.cel === 'string' && daml !== 'Timestamp') || t.cel === 'timestamp';
    case 'Timestamp':
      return (t.cel === 'string' && daml !== 'Date') || t.cel === 'timestamp';
    case 'Bool':
      return t.cel === 'bool';
    case 'Record':
    case 'Variant':
    case 'TextMap':
    case 'Unit':
      return t.cel === 'map';
    case 'List':
    case 'GenMap':
      return t.cel === 'list';
    default:
      return true;
  }
}

/** Why a `${{ }}` value of type `t` cannot be a value of `resolved`; null when it can. */
export function expressionValueProblem(
  catalogue: PackageCatalogue,
  t: OperandType,
  resolved: ResolvedType,
  type: DamlType,
): { message: string; hint?: string } | null {
  if (t.cel === 'null' && resolved.kind !== 'Optional') {
    return { message: `the expression gives null, and ${showType(type)} is not Optional` };
  }
  const target =
    resolved.kind === 'Optional' && resolved.of.kind !== 'Optional' && t.cel !== 'null'
      ? catalogue.resolve(resolved.of)
      : resolved;
  if (accepts(target, t)) return null;
  const what =
    t.daml !== undefined
      ? `a Daml ${showType(t.daml.type)}`
      : t.cel === 'string'
        ? 'text'
        : `a ${t.cel}`;
  const daml = t.daml?.resolved.kind;
  const hint =
    target.kind === 'Date' && daml === 'Timestamp'
      ? 'a Time is text such as 2025-01-31T09:00:00Z, which a Date does not read: convert it, ${{ timestamp(…) }} is sent as its UTC day'
      : target.kind === 'Timestamp' && daml === 'Date'
        ? 'a Date is text such as 2025-01-31, which a Time does not read: convert it, ${{ date(…) }} is sent as its midnight UTC'
        : target.kind === 'Int64' && daml === 'Numeric'
          ? 'a Numeric is text with its decimals ("1.0000000000"), which an Int does not read: convert it, ${{ decimal(…) }} is sent as a whole number, and one with a fraction is a rule error'
          : undefined;
  return {
    message: `the expression gives ${what}, and the field is ${expected(target, type)}`,
    ...(hint === undefined ? {} : { hint }),
  };
}
