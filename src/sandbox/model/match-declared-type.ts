import type { DamlType, FieldDef } from './model-types.js';
import { formatDamlType } from './parse-daml-type.js';

/**
 * Why a type a model file declares does not describe a DAR's type, or null when it does: the
 * same primitives, Numeric scales and enum constructors, records with the same fields (in any
 * order) of matching types, `ContractId` alone for any contract id. What a model cannot write (a
 * variant, a `Map`, a type it has no name for) never matches: the message says to leave the
 * declaration out and take the DAR's.
 */
export function matchDeclaredType(declared: DamlType, actual: DamlType): string | null {
  const differ = (): string =>
    `declared ${formatDamlType(declared)}, but the DAR's type is ${formatDamlType(actual)}`;
  if (actual.kind === 'Variant' || actual.kind === 'GenMap' || actual.kind === 'Unsupported') {
    return `${differ()}, which a model cannot write: leave the declaration out to take the DAR's`;
  }
  switch (declared.kind) {
    case 'Numeric':
      return actual.kind === 'Numeric' && actual.scale === declared.scale ? null : differ();
    case 'ContractId':
      return actual.kind === 'ContractId' &&
        (declared.template === null || declared.template === actual.template)
        ? null
        : differ();
    case 'Optional':
    case 'List':
    case 'TextMap': {
      if (actual.kind !== declared.kind) return differ();
      const inner = matchDeclaredType(declared.of, actual.of);
      return inner === null ? null : `${differ()}: ${inner}`;
    }
    case 'Enum':
      return actual.kind === 'Enum' &&
        actual.constructors.length === declared.constructors.length &&
        actual.constructors.every((c, i) => c === declared.constructors[i])
        ? null
        : differ();
    case 'Record': {
      if (actual.kind !== 'Record') return differ();
      const problems = matchDeclaredFields(declared.fields, actual.fields);
      return problems.length === 0
        ? null
        : `${differ()}: ${problems.map((p) => `${p.field}: ${p.problem}`).join('; ')}`;
    }
    default:
      return declared.kind === actual.kind ? null : differ();
  }
}

/** A field whose declaration does not match the DAR's, and why. */
export type FieldMismatch = {
  readonly field: string;
  /** `declared`: the model declares it (point there); `missing`: only the DAR has it. */
  readonly where: 'declared' | 'missing';
  readonly problem: string;
};

/** The fields a model declares against the DAR's: unknown, missing and mistyped ones. */
export function matchDeclaredFields(
  declared: readonly FieldDef[],
  actual: readonly FieldDef[],
): FieldMismatch[] {
  const out: FieldMismatch[] = [];
  for (const d of declared) {
    const a = actual.find((f) => f.name === d.name);
    if (a === undefined) {
      out.push({
        field: d.name,
        where: 'declared',
        problem: `the DAR has no field "${d.name}" here (fields: ${actual.map((f) => f.name).join(', ') || 'none'})`,
      });
      continue;
    }
    const problem = matchDeclaredType(d.type, a.type);
    if (problem !== null) out.push({ field: d.name, where: 'declared', problem });
  }
  for (const a of actual) {
    if (!declared.some((d) => d.name === a.name)) {
      out.push({
        field: a.name,
        where: 'missing',
        problem: `the DAR's field "${a.name}" (${formatDamlType(a.type)}) is not declared`,
      });
    }
  }
  return out;
}
