import type { DamlType } from './model-types.js';

const PRIMITIVES: Readonly<Record<string, DamlType>> = {
  Party: { kind: 'Party' },
  Text: { kind: 'Text' },
  Int64: { kind: 'Int64' },
  Int: { kind: 'Int64' },
  Decimal: { kind: 'Numeric', scale: 10 },
  Bool: { kind: 'Bool' },
  Date: { kind: 'Date' },
  Time: { kind: 'Timestamp' },
  Timestamp: { kind: 'Timestamp' },
  Unit: { kind: 'Unit' },
};

const QUALIFIED = /^[A-Z][A-Za-z0-9_]*(\.[A-Z][A-Za-z0-9_]*)*:[A-Z][A-Za-z0-9_]*$/;

/** Parsing failed: `offset` is 0-based in the type text. */
export type DamlTypeSyntaxError = { readonly offset: number; readonly problem: string };

/**
 * Parses Daml-style type syntax: `Party`, `Numeric 2`, `Optional Text`, `List Party` (or
 * `[Party]`), `TextMap Int64`, `ContractId Invoice:Invoice`, with parentheses for nesting.
 */
export function parseDamlType(text: string): DamlType | DamlTypeSyntaxError {
  const tokens: { text: string; offset: number }[] = [];
  const re = /\s*([()[\]]|[A-Za-z0-9_.:]+|\S)/gy;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const t = m[1] ?? '';
    tokens.push({ text: t, offset: m.index + m[0].length - t.length });
  }
  let i = 0;
  const fail = (problem: string): DamlTypeSyntaxError => ({
    offset: tokens[i]?.offset ?? text.length,
    problem,
  });
  const known =
    'Party, Text, Int64, Numeric n, Decimal, Bool, Date, Time, Unit, ContractId T, Optional t, List t, TextMap t';

  // A whole type after an opening bracket, up to its `close`.
  const enclosed = (close: string): DamlType | DamlTypeSyntaxError => {
    i++;
    const inner = parse(true);
    if ('problem' in inner) return inner;
    if (tokens[i]?.text !== close) return fail(`a "${close}" is missing`);
    i++;
    return inner;
  };
  // `full`: a type applied to arguments; otherwise only an atom (for arguments of constructors).
  const parse = (full: boolean): DamlType | DamlTypeSyntaxError => {
    const tok = tokens[i];
    if (tok === undefined) return fail(`a type is missing: use one of ${known}`);
    if (tok.text === '(') return enclosed(')');
    if (tok.text === '[') {
      const inner = enclosed(']');
      return 'problem' in inner ? inner : { kind: 'List', of: inner };
    }
    const primitive = PRIMITIVES[tok.text];
    if (primitive !== undefined) {
      i++;
      return primitive;
    }
    if (!full && ['Numeric', 'ContractId', 'Optional', 'List', 'TextMap'].includes(tok.text)) {
      return fail(`put "${tok.text} …" in parentheses when it is an argument of another type`);
    }
    switch (tok.text) {
      case 'Numeric': {
        i++;
        const scaleTok = tokens[i];
        if (scaleTok === undefined || !/^\d+$/.test(scaleTok.text))
          return { kind: 'Numeric', scale: 10 };
        const scale = Number(scaleTok.text);
        if (scale > 37) return fail('a Numeric scale must be between 0 and 37');
        i++;
        return { kind: 'Numeric', scale };
      }
      case 'ContractId': {
        i++;
        const target = tokens[i];
        if (target !== undefined && QUALIFIED.test(target.text)) {
          i++;
          return { kind: 'ContractId', template: target.text };
        }
        return { kind: 'ContractId', template: null };
      }
      case 'Optional':
      case 'List':
      case 'TextMap': {
        i++;
        const of = parse(false);
        if ('problem' in of) return of;
        return { kind: tok.text, of };
      }
      default:
        return fail(`unknown type "${tok.text}": use one of ${known}`);
    }
  };
  const type = parse(true);
  if ('problem' in type) return type;
  if (i < tokens.length) return fail(`unexpected "${tokens[i]?.text ?? ''}" after the type`);
  return type;
}

/**
 * Daml-style rendering, for messages. A named data type (from a DAR) shows its name, so a
 * recursive type renders finitely.
 */
export function formatDamlType(type: DamlType): string {
  const arg = (t: DamlType): string => {
    const text = formatDamlType(t);
    return text.includes(' ') && !text.startsWith('{') ? `(${text})` : text;
  };
  switch (type.kind) {
    case 'Numeric':
      return `Numeric ${type.scale}`;
    case 'ContractId':
      return type.template === null ? 'ContractId' : `ContractId ${type.template}`;
    case 'Optional':
    case 'List':
    case 'TextMap':
      return `${type.kind} ${arg(type.of)}`;
    case 'GenMap':
      return `Map ${arg(type.key)} ${arg(type.value)}`;
    case 'Enum':
      return type.name ?? `Enum (${type.constructors.join(' | ')})`;
    case 'Record':
      return (
        type.name ??
        `{${type.fields.map((f) => `${f.name}: ${formatDamlType(f.type)}`).join(', ')}}`
      );
    case 'Variant':
      return type.name;
    case 'Unsupported':
      return type.text;
    default:
      return type.kind;
  }
}
