import type { YamlPath } from '../../core/yaml-locator.js';
import { CelCompileError } from '../../rules/cel/cel-compile-error.js';
import type { CelEnvironment } from '../../rules/cel/cel-environment.js';
import type { ModelProblems } from './model-error.js';
import type { ModelLocator } from './model-locator.js';
import type { DamlType, FieldDef, ModelExpr, PartiesExpr, ValueExpr } from './model-types.js';
import type { RawParties, RawType, RawValue } from './raw-model.js';
import { formatDamlType, parseDamlType } from './parse-daml-type.js';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Stands for a type that did not parse (its problem is reported): checks that would find it
 * wrong again let it pass, so one mistake is reported once.
 */
const UNKNOWN_TYPE: DamlType = Object.freeze({ kind: 'Unit' });

/**
 * Compiles the expressions of a model file: types, CEL, values and party lists. A mistake is
 * added to `problems` and a stand-in returned, so compiling goes on and finds the others.
 */
export class ModelExpressions {
  readonly #at: ModelLocator;
  readonly #cel: CelEnvironment;
  readonly #problems: ModelProblems;

  constructor(at: ModelLocator, cel: CelEnvironment, problems: ModelProblems) {
    this.#at = at;
    this.#cel = cel;
    this.#problems = problems;
  }

  type(raw: RawType, path: YamlPath): DamlType {
    if (typeof raw === 'string') {
      const parsed = parseDamlType(raw);
      if (!('problem' in parsed)) return parsed;
      this.#problems.add(this.#at.exprPos(path, 1, parsed.offset + 1), parsed.problem);
      return UNKNOWN_TYPE;
    }
    if (Array.isArray((raw as { enum?: unknown }).enum)) {
      return { kind: 'Enum', constructors: (raw as { enum: string[] }).enum };
    }
    return this.recordType(raw as Record<string, RawType>, path);
  }

  recordType(raw: Record<string, RawType>, path: YamlPath): DamlType & { kind: 'Record' } {
    return { kind: 'Record', fields: this.fields(raw, path) };
  }

  fields(raw: Record<string, RawType>, path: YamlPath): FieldDef[] {
    return Object.entries(raw).map(([name, t]) => ({ name, type: this.type(t, [...path, name]) }));
  }

  expr(source: string, path: YamlPath, variables: readonly string[]): ModelExpr {
    const pos = this.#at.pos(path);
    try {
      return { source, pos, program: this.#cel.compile(source, variables) };
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      const hint = /Unknown variable/i.test(error.summary)
        ? ` (in scope here: ${variables.join(', ')})`
        : '';
      this.#problems.add(
        this.#at.exprPos(path, error.line, error.col),
        `CEL: ${error.summary}${hint}`,
        error,
      );
      return { source, pos, program: this.#cel.compile('null', []) };
    }
  }

  value(raw: RawValue, path: YamlPath, variables: readonly string[]): ValueExpr {
    if (raw !== null && typeof raw === 'object') {
      const fields = new Map<string, ValueExpr>();
      for (const [k, v] of Object.entries(raw))
        fields.set(k, this.value(v, [...path, k], variables));
      return { kind: 'record', fields };
    }
    if (typeof raw === 'string') return { kind: 'cel', expr: this.expr(raw, path, variables) };
    // A YAML constant (number, boolean, null) is the CEL literal of the same value.
    const literal =
      raw === null
        ? 'null'
        : typeof raw === 'number' && Number.isInteger(raw)
          ? String(raw)
          : JSON.stringify(raw);
    return { kind: 'cel', expr: this.expr(literal, path, []) };
  }

  /** A party list: each entry a Party field of one of `fieldScopes`, or a CEL expression. */
  parties(
    raw: RawParties,
    path: YamlPath,
    fieldScopes: readonly (readonly FieldDef[])[],
    variables: readonly string[],
  ): PartiesExpr[] {
    const entries = typeof raw === 'string' ? [raw] : raw;
    return entries.map((entry, i) => {
      const p = typeof raw === 'string' ? path : [...path, i];
      if (!IDENT.test(entry) || variables.includes(entry)) {
        return { kind: 'cel', expr: this.expr(entry, p, variables) };
      }
      const pos = this.#at.pos(p);
      const fields = fieldScopes.flat();
      const field = fields.find((f) => f.name === entry);
      if (field === undefined) {
        const partyFields = fields.filter((f) => isPartyish(f.type)).map((f) => f.name);
        this.#problems.add(
          pos,
          `"${entry}" is not a field here: name a Party field (${
            partyFields.join(', ') || 'none'
          }) or write a CEL expression such as this.${entry}`,
        );
      } else if (!isPartyish(field.type)) {
        this.#problems.add(
          pos,
          `field "${entry}" has type ${formatDamlType(field.type)}: parties must be Party, Optional Party or List Party`,
        );
      }
      return { kind: 'field', field: entry, pos };
    });
  }
}

function isPartyish(type: DamlType): boolean {
  if (type === UNKNOWN_TYPE || type.kind === 'Party') return true;
  if (type.kind === 'Optional' || type.kind === 'List') return type.of.kind === 'Party';
  return false;
}
