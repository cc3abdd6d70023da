import type { ErrorObject } from 'ajv';
import { lazyValidator } from '../../core/lazy-validator.js';
import { isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { ajvInstancePath } from '../../core/ajv-instance-path.js';
import { sha256Hex } from '../../core/sha256-hex.js';
import { YamlLocator } from '../../core/yaml-locator.js';
import { CelCompileError } from '../../rules/cel/cel-compile-error.js';
import { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { ModelError } from './model-error.js';
import { MODEL_PATTERNS, MODEL_SCHEMA } from './model-schema.js';
import type {
  ChoiceDef,
  DamlType,
  FieldDef,
  InterfaceDef,
  InterfaceInstanceDef,
  KeyDef,
  ModelExpr,
  PackageModel,
  PartiesExpr,
  SourcePos,
  Step,
  TemplateDef,
  ValueExpr,
} from './model-types.js';
import { formatDamlType, parseDamlType } from './parse-daml-type.js';

type Path = readonly (string | number)[];

const modelValidator = lazyValidator<RawModel>({ allErrors: true, strict: false }, MODEL_SCHEMA);
const IDENT = new RegExp(MODEL_PATTERNS.IDENT);

export type LoadModelOptions = {
  /** Share one environment across files; building one is the expensive part. */
  readonly cel?: CelEnvironment;
};

/** Raw shapes after schema validation. */
type RawType = string | { enum: string[] } | Record<string, unknown>;
type RawValue = string | number | boolean | null | { [k: string]: RawValue };
type RawParties = string | string[];
type RawStep = {
  create?: string;
  with?: RawValue;
  exercise?: string;
  on?: string;
  template?: string;
  argument?: RawValue;
  fetch?: string;
  assert?: string;
  message?: string;
  as?: string;
};
type RawChoice = {
  controllers: RawParties;
  observers?: RawParties;
  consuming?: boolean;
  argument?: Record<string, RawType>;
  body?: RawStep[];
  result?: RawValue;
  returns?: RawType;
};
type RawTemplate = {
  fields: Record<string, RawType>;
  signatories: RawParties;
  observers?: RawParties;
  ensure?: string;
  key?: { type: RawType; value: RawValue; maintainers: RawParties };
  implements?: Record<string, { view: RawValue }>;
  choices?: Record<string, RawChoice>;
};
type RawModel = {
  package: { name: string; version: string };
  interfaces?: Record<string, { view: Record<string, RawType> }>;
  templates: Record<string, RawTemplate>;
};

/** The shared YAML locator, plus positions inside a CEL or type expression given as line/col. */
class ModelLocator extends YamlLocator {
  readonly #lines: LineCounter;
  readonly #source: string;

  constructor(file: string, source: string, doc: Document, lines: LineCounter) {
    super(file, source, doc, lines);
    this.#source = source;
    this.#lines = lines;
  }

  /** The position of line/col (1-based, within the expression) of a scalar's text. */
  exprPos(path: Path, line: number, col: number): SourcePos {
    const node = this.node(path);
    if (!isScalar(node) || !node.range) return this.pos(path);
    const start = node.range[0];
    switch (node.type) {
      case 'QUOTE_DOUBLE':
      case 'QUOTE_SINGLE':
      case 'PLAIN': {
        const base = this.at(start + (node.type === 'PLAIN' ? 0 : 1));
        return line === 1
          ? { file: this.file, line: base.line, col: base.col + col - 1 }
          : { file: this.file, line: base.line + line - 1, col };
      }
      default: {
        // Block scalar: content starts on the line after the `|` or `>` header.
        const header = this.at(start);
        const indent = this.#blockIndent(header.line);
        return { file: this.file, line: header.line + line, col: indent + col };
      }
    }
  }

  /** The indentation of the first content line of a block scalar (line numbers are 1-based). */
  #blockIndent(headerLine: number): number {
    const starts = this.#lines.lineStarts;
    const from = starts[headerLine];
    if (from === undefined) return 0;
    const lineText = this.#source.slice(from, starts[headerLine + 1]);
    return lineText.length - lineText.trimStart().length;
  }
}

function describeAjvError(e: ErrorObject): { problem: string; key?: string } {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return {
        problem: `unknown key "${String(params.additionalProperty)}": remove it or check its spelling`,
        key: String(params.additionalProperty),
      };
    case 'required':
      return { problem: `"${String(params.missingProperty)}" is missing` };
    case 'propertyNames':
      return {
        problem: `the name "${String(params.propertyName)}" is not allowed here`,
        key: String(params.propertyName),
      };
    case 'pattern': {
      const hint =
        params.pattern === MODEL_PATTERNS.QUALIFIED
          ? 'write Module:Entity with capitalised names, e.g. Invoice:Invoice'
          : params.pattern === MODEL_PATTERNS.IDENT
            ? 'use letters, digits and _, not starting with a digit'
            : `it must match ${String(params.pattern)}`;
      return { problem: `invalid name: ${hint}` };
    }
    default:
      return { problem: e.message ?? e.keyword };
  }
}

/** Picks the most useful schema error: deepest first, `anyOf` summaries last. */
function pickError(errors: readonly ErrorObject[]): ErrorObject {
  const ranked = [...errors].sort((a, b) => {
    const depth = ajvInstancePath(b).length - ajvInstancePath(a).length;
    if (depth !== 0) return depth;
    return (
      Number(a.keyword === 'anyOf' || a.keyword === 'type') -
      Number(b.keyword === 'anyOf' || b.keyword === 'type')
    );
  });
  // propertyNames errors come with a nested pattern error on the same path; prefer the named one.
  return (
    ranked.find((e) => e.keyword === 'propertyNames' || e.keyword === 'additionalProperties') ??
    ranked[0]!
  );
}

/**
 * Parses, validates and compiles one model file. Throws ModelError (code INVALID_MODEL) with
 * file:line:col on the first problem: YAML syntax, schema, types, references, CEL.
 */
export function loadModel(
  text: string,
  file: string,
  options: LoadModelOptions = {},
): PackageModel {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const at = new ModelLocator(file, text, doc, lines);
  const yamlError = doc.errors[0];
  if (yamlError !== undefined) {
    throw new ModelError(
      at.at(yamlError.pos[0]),
      `YAML syntax: ${yamlError.message.split('\n')[0] ?? ''}`,
    );
  }
  const raw: unknown = doc.toJS();
  const validateModel = modelValidator();
  if (!validateModel(raw)) {
    const errors = validateModel.errors ?? [];
    const first = pickError(errors);
    const path = ajvInstancePath(first);
    const { problem, key } = describeAjvError(first);
    const more =
      errors.length > 1
        ? ` (${errors.length - 1} more schema problem(s) may follow from this one)`
        : '';
    // A missing key is reported where its map is named (the map's own range starts at its first key).
    const pos =
      key !== undefined
        ? at.pos([...path, key], { key: true })
        : first.keyword === 'required' && path.length > 0
          ? at.pos(path, { key: true })
          : at.pos(path);
    throw new ModelError(pos, `${problem}${more}`);
  }
  return new ModelCompiler(raw, at, file, options.cel ?? CelEnvironment.create()).compile();
}

class ModelCompiler {
  readonly #raw: RawModel;
  readonly #at: ModelLocator;
  readonly #file: string;
  readonly #cel: CelEnvironment;
  readonly #packageId: string;
  readonly #name: string;

  constructor(raw: RawModel, at: ModelLocator, file: string, cel: CelEnvironment) {
    this.#raw = raw;
    this.#at = at;
    this.#file = file;
    this.#cel = cel;
    this.#name = raw.package.name;
    this.#packageId = sha256Hex(`${raw.package.name}:${raw.package.version}`);
  }

  compile(): PackageModel {
    const interfaces = new Map<string, InterfaceDef>();
    for (const [qn, def] of Object.entries(this.#raw.interfaces ?? {})) {
      interfaces.set(qn, {
        packageId: this.#packageId,
        packageName: this.#name,
        qualifiedName: qn,
        interfaceId: `${this.#packageId}:${qn}`,
        viewType: this.#recordType(def.view, ['interfaces', qn, 'view']),
      });
    }
    if (this.#raw.templates === undefined)
      throw new ModelError(this.#at.pos([]), '"templates" is missing');
    const names = new Set([...Object.keys(this.#raw.templates), ...interfaces.keys()]);
    const templates = new Map<string, TemplateDef>();
    for (const [qn, def] of Object.entries(this.#raw.templates)) {
      if (interfaces.has(qn)) {
        throw new ModelError(
          this.#at.pos(['templates', qn], { key: true }),
          `"${qn}" is declared both as an interface and as a template`,
        );
      }
      templates.set(qn, this.#template(qn, def, names, interfaces));
    }
    this.#checkReferences(templates, interfaces);
    return {
      file: this.#file,
      name: this.#name,
      version: this.#raw.package.version,
      packageId: this.#packageId,
      templates,
      interfaces,
    };
  }

  #type(raw: RawType, path: Path): DamlType {
    if (typeof raw === 'string') {
      const parsed = parseDamlType(raw);
      if ('problem' in parsed)
        throw new ModelError(this.#at.exprPos(path, 1, parsed.offset + 1), parsed.problem);
      return parsed;
    }
    if (Array.isArray((raw as { enum?: unknown }).enum)) {
      return { kind: 'Enum', constructors: (raw as { enum: string[] }).enum };
    }
    return this.#recordType(raw as Record<string, RawType>, path);
  }

  #recordType(raw: Record<string, RawType>, path: Path): DamlType & { kind: 'Record' } {
    return { kind: 'Record', fields: this.#fields(raw, path) };
  }

  #fields(raw: Record<string, RawType>, path: Path): FieldDef[] {
    return Object.entries(raw).map(([name, t]) => ({ name, type: this.#type(t, [...path, name]) }));
  }

  #expr(source: string, path: Path, variables: readonly string[]): ModelExpr {
    try {
      return { source, pos: this.#at.pos(path), program: this.#cel.compile(source, variables) };
    } catch (error) {
      if (error instanceof CelCompileError) {
        const hint = /Unknown variable/i.test(error.summary)
          ? ` (in scope here: ${variables.join(', ')})`
          : '';
        throw new ModelError(
          this.#at.exprPos(path, error.line, error.col),
          `CEL: ${error.summary}${hint}`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  #value(raw: RawValue, path: Path, variables: readonly string[]): ValueExpr {
    if (raw !== null && typeof raw === 'object') {
      const fields = new Map<string, ValueExpr>();
      for (const [k, v] of Object.entries(raw))
        fields.set(k, this.#value(v, [...path, k], variables));
      return { kind: 'record', fields };
    }
    if (typeof raw === 'string') return { kind: 'cel', expr: this.#expr(raw, path, variables) };
    // A YAML constant (number, boolean, null) is the CEL literal of the same value.
    const literal =
      raw === null
        ? 'null'
        : typeof raw === 'number' && Number.isInteger(raw)
          ? String(raw)
          : JSON.stringify(raw);
    return { kind: 'cel', expr: this.#expr(literal, path, []) };
  }

  #parties(
    raw: RawParties,
    path: Path,
    fieldScopes: readonly (readonly FieldDef[])[],
    variables: readonly string[],
  ): PartiesExpr[] {
    const entries = typeof raw === 'string' ? [raw] : raw;
    return entries.map((entry, i) => {
      const p = typeof raw === 'string' ? path : [...path, i];
      if (IDENT.test(entry) && !variables.includes(entry)) {
        const field = fieldScopes.flat().find((f) => f.name === entry);
        if (field === undefined) {
          throw new ModelError(
            this.#at.pos(p),
            `"${entry}" is not a field here: name a Party field (${
              fieldScopes
                .flat()
                .filter((f) => isPartyish(f.type))
                .map((f) => f.name)
                .join(', ') || 'none'
            }) or write a CEL expression such as this.${entry}`,
          );
        }
        if (!isPartyish(field.type)) {
          throw new ModelError(
            this.#at.pos(p),
            `field "${entry}" has type ${formatDamlType(field.type)}: parties must be Party, Optional Party or List Party`,
          );
        }
        return { kind: 'field', field: entry, pos: this.#at.pos(p) };
      }
      return { kind: 'cel', expr: this.#expr(entry, p, variables) };
    });
  }

  #template(
    qn: string,
    raw: RawTemplate,
    names: ReadonlySet<string>,
    interfaces: ReadonlyMap<string, InterfaceDef>,
  ): TemplateDef {
    const base: Path = ['templates', qn];
    const fields = this.#fields(raw.fields, [...base, 'fields']);
    const thisScope = ['this'];
    const signatories = this.#parties(
      raw.signatories,
      [...base, 'signatories'],
      [fields],
      thisScope,
    );
    const observers = this.#parties(
      raw.observers ?? [],
      [...base, 'observers'],
      [fields],
      thisScope,
    );
    const ensure =
      raw.ensure === undefined ? null : this.#expr(raw.ensure, [...base, 'ensure'], thisScope);
    let key: KeyDef | null = null;
    if (raw.key !== undefined) {
      key = {
        type: this.#type(raw.key.type, [...base, 'key', 'type']),
        value: this.#value(raw.key.value, [...base, 'key', 'value'], thisScope),
        maintainers: this.#parties(
          raw.key.maintainers,
          [...base, 'key', 'maintainers'],
          [fields],
          thisScope,
        ),
      };
    }
    const implementsMap = new Map<string, InterfaceInstanceDef>();
    for (const [iname, def] of Object.entries(raw.implements ?? {})) {
      if (!interfaces.has(iname)) {
        throw new ModelError(
          this.#at.pos([...base, 'implements', iname], { key: true }),
          `unknown interface "${iname}": declare it under "interfaces" (known: ${[...interfaces.keys()].join(', ') || 'none'})`,
        );
      }
      implementsMap.set(iname, {
        interface: iname,
        view: this.#value(def.view, [...base, 'implements', iname, 'view'], thisScope),
      });
    }
    const choices = new Map<string, ChoiceDef>();
    for (const [cname, def] of Object.entries(raw.choices ?? {})) {
      if (cname === 'Archive') {
        throw new ModelError(
          this.#at.pos([...base, 'choices', cname], { key: true }),
          'every template already has the consuming Archive choice (controlled by its signatories); pick another name',
        );
      }
      choices.set(cname, this.#choice(cname, def, [...base, 'choices', cname], fields, names));
    }
    choices.set('Archive', {
      name: 'Archive',
      consuming: true,
      controllers: signatories,
      observers: [],
      argument: [],
      body: [],
      result: null,
      returns: { kind: 'Unit' },
    });
    const [moduleName, entityName] = qn.split(':') as [string, string];
    return {
      packageId: this.#packageId,
      packageName: this.#name,
      qualifiedName: qn,
      moduleName,
      entityName,
      templateId: `${this.#packageId}:${qn}`,
      fields,
      signatories,
      observers,
      ensure,
      key,
      choices,
      implements: implementsMap,
    };
  }

  #choice(
    name: string,
    raw: RawChoice,
    path: Path,
    fields: readonly FieldDef[],
    names: ReadonlySet<string>,
  ): ChoiceDef {
    const argument = this.#fields(raw.argument ?? {}, [...path, 'argument']);
    const scope = ['this', 'arg', 'self'];
    const controllers = this.#parties(
      raw.controllers,
      [...path, 'controllers'],
      [fields, argument],
      scope,
    );
    const observers = this.#parties(
      raw.observers ?? [],
      [...path, 'observers'],
      [fields, argument],
      scope,
    );
    const body: Step[] = [];
    const stepScope = [...scope];
    (raw.body ?? []).forEach((s, i) => {
      const step = this.#step(s, [...path, 'body', i], stepScope, names);
      body.push(step);
      if (step.kind !== 'assert' && step.name !== null) {
        if (stepScope.includes(step.name)) {
          throw new ModelError(
            this.#at.pos([...path, 'body', i, 'as']),
            `the name "${step.name}" is already in use in this choice: pick another one`,
          );
        }
        stepScope.push(step.name);
      }
    });
    return {
      name,
      consuming: raw.consuming ?? true,
      controllers,
      observers,
      argument,
      body,
      // Like `with:`: a CEL expression, or a YAML map of values (a record), or a constant.
      result:
        raw.result === undefined ? null : this.#value(raw.result, [...path, 'result'], stepScope),
      returns: raw.returns === undefined ? null : this.#type(raw.returns, [...path, 'returns']),
    };
  }

  #step(raw: RawStep, path: Path, scope: readonly string[], names: ReadonlySet<string>): Step {
    const kinds = (['create', 'exercise', 'fetch', 'assert'] as const).filter(
      (k) => raw[k] !== undefined,
    );
    const pos = this.#at.pos(path);
    if (kinds.length !== 1) {
      throw new ModelError(
        pos,
        `a step needs exactly one of create, exercise, fetch or assert${kinds.length > 1 ? ` (found ${kinds.join(' and ')})` : ''}`,
      );
    }
    const allowed: Record<(typeof kinds)[number], readonly string[]> = {
      create: ['create', 'with', 'as'],
      exercise: ['exercise', 'on', 'template', 'argument', 'as'],
      fetch: ['fetch', 'template', 'as'],
      assert: ['assert', 'message'],
    };
    const kind = kinds[0]!;
    for (const k of Object.keys(raw)) {
      if (!allowed[kind].includes(k)) {
        throw new ModelError(
          this.#at.pos([...path, k], { key: true }),
          `"${k}" does not belong in a ${kind} step (allowed: ${allowed[kind].join(', ')})`,
        );
      }
    }
    const need = (k: keyof RawStep): string => {
      const v = raw[k];
      if (typeof v !== 'string') throw new ModelError(pos, `a ${kind} step needs "${k}"`);
      return v;
    };
    const template = (k: 'create' | 'template'): string => {
      const t = need(k);
      if (!names.has(t)) {
        throw new ModelError(
          this.#at.pos([...path, k]),
          `unknown template "${t}" (known: ${[...names].join(', ')})`,
        );
      }
      return t;
    };
    const name = raw.as ?? null;
    switch (kind) {
      case 'create':
        if (raw.with === undefined)
          throw new ModelError(pos, 'a create step needs "with": the create arguments');
        return {
          kind,
          name,
          template: template('create'),
          argument: this.#value(raw.with, [...path, 'with'], scope),
          pos,
        };
      case 'exercise':
        return {
          kind,
          name,
          template: template('template'),
          contractId: this.#expr(need('on'), [...path, 'on'], scope),
          choice: need('exercise'),
          argument: this.#value(raw.argument ?? {}, [...path, 'argument'], scope),
          pos,
        };
      case 'fetch':
        return {
          kind,
          name,
          template: template('template'),
          contractId: this.#expr(need('fetch'), [...path, 'fetch'], scope),
          pos,
        };
      case 'assert':
        return {
          kind,
          condition: this.#expr(need('assert'), [...path, 'assert'], scope),
          message: raw.message ?? `assertion failed: ${raw.assert ?? ''}`,
          pos,
        };
    }
  }

  /** Exercise steps name choices of other templates; ContractId types name templates. */
  #checkReferences(
    templates: ReadonlyMap<string, TemplateDef>,
    interfaces: ReadonlyMap<string, InterfaceDef>,
  ): void {
    for (const [qn, t] of templates) {
      for (const [cname, c] of t.choices) {
        c.body.forEach((s, i) => {
          if (s.kind !== 'exercise') return;
          const target = templates.get(s.template);
          if (target === undefined) {
            throw new ModelError(
              this.#at.pos(['templates', qn, 'choices', cname, 'body', i, 'template']),
              `"${s.template}" is an interface: exercising interface choices from a step is not supported; name the template`,
            );
          }
          if (!target.choices.has(s.choice)) {
            throw new ModelError(
              this.#at.pos(['templates', qn, 'choices', cname, 'body', i, 'exercise']),
              `template ${s.template} has no choice "${s.choice}" (choices: ${[...target.choices.keys()].join(', ')})`,
            );
          }
        });
      }
      const checkType = (type: DamlType, path: Path): void => {
        if (
          type.kind === 'ContractId' &&
          type.template !== null &&
          !templates.has(type.template) &&
          !interfaces.has(type.template)
        ) {
          throw new ModelError(
            this.#at.pos(path),
            `unknown template "${type.template}" in ${formatDamlType(type)}`,
          );
        }
        if (type.kind === 'Optional' || type.kind === 'List' || type.kind === 'TextMap')
          checkType(type.of, path);
        if (type.kind === 'Record')
          for (const f of type.fields) checkType(f.type, [...path, f.name]);
      };
      for (const f of t.fields) checkType(f.type, ['templates', qn, 'fields', f.name]);
    }
  }
}

function isPartyish(type: DamlType): boolean {
  if (type.kind === 'Party') return true;
  if (type.kind === 'Optional' || type.kind === 'List') return type.of.kind === 'Party';
  return false;
}
