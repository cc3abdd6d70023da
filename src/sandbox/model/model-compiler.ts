import { sha256Hex } from '../../core/sha256-hex.js';
import type { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { checkModelReferences } from './check-model-references.js';
import { compileChoice, type ChoiceContext } from './compile-choice.js';
import type { ModelProblems } from './model-error.js';
import { ModelExpressions } from './model-expressions.js';
import type { ModelLocator } from './model-locator.js';
import type {
  ChoiceDef,
  InterfaceDef,
  InterfaceInstanceDef,
  KeyDef,
  PackageModel,
  TemplateDef,
} from './model-types.js';
import type { RawModel, RawTemplate } from './raw-model.js';

/**
 * Compiles a schema-valid model file into a PackageModel. Every mistake the schema cannot see
 * (types, references, CEL) is added to `problems`; the result is only meant to be used when
 * none were.
 */
export function compileModel(
  raw: RawModel,
  at: ModelLocator,
  cel: CelEnvironment,
  problems: ModelProblems,
): PackageModel {
  const name = raw.package.name;
  const packageId = sha256Hex(`${raw.package.name}:${raw.package.version}`);
  const exprs = new ModelExpressions(at, cel, problems);
  const interfaces = new Map<string, InterfaceDef>();
  for (const [qn, def] of Object.entries(raw.interfaces ?? {})) {
    interfaces.set(qn, {
      packageId,
      packageName: name,
      qualifiedName: qn,
      interfaceId: `${packageId}:${qn}`,
      viewType: exprs.recordType(def.view, ['interfaces', qn, 'view']),
    });
  }
  const ctx: ChoiceContext = {
    at,
    problems,
    exprs,
    names: new Set([...Object.keys(raw.templates), ...interfaces.keys()]),
  };
  const templates = new Map<string, TemplateDef>();
  for (const [qn, def] of Object.entries(raw.templates)) {
    if (interfaces.has(qn)) {
      problems.add(
        at.pos(['templates', qn], { key: true }),
        `"${qn}" is declared both as an interface and as a template`,
      );
      continue;
    }
    templates.set(qn, compileTemplate(ctx, { packageId, packageName: name }, qn, def, interfaces));
  }
  checkModelReferences(templates, interfaces, at, problems);
  return { file: at.file, name, version: raw.package.version, packageId, templates, interfaces };
}

function compileTemplate(
  ctx: ChoiceContext,
  pkg: { readonly packageId: string; readonly packageName: string },
  qn: string,
  raw: RawTemplate,
  interfaces: ReadonlyMap<string, InterfaceDef>,
): TemplateDef {
  const { at, exprs, problems } = ctx;
  const base = ['templates', qn];
  const fields = exprs.fields(raw.fields, [...base, 'fields']);
  const thisScope = ['this'];
  const signatories = exprs.parties(raw.signatories, [...base, 'signatories'], [fields], thisScope);
  const observers = exprs.parties(raw.observers ?? [], [...base, 'observers'], [fields], thisScope);
  const ensure =
    raw.ensure === undefined ? null : exprs.expr(raw.ensure, [...base, 'ensure'], thisScope);
  let key: KeyDef | null = null;
  if (raw.key !== undefined) {
    key = {
      type: exprs.type(raw.key.type, [...base, 'key', 'type']),
      value: exprs.value(raw.key.value, [...base, 'key', 'value'], thisScope),
      maintainers: exprs.parties(
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
      problems.add(
        at.pos([...base, 'implements', iname], { key: true }),
        `unknown interface "${iname}": declare it under "interfaces" (known: ${[...interfaces.keys()].join(', ') || 'none'})`,
      );
      continue;
    }
    implementsMap.set(iname, {
      interface: iname,
      view: exprs.value(def.view, [...base, 'implements', iname, 'view'], thisScope),
    });
  }
  const choices = new Map<string, ChoiceDef>();
  for (const [cname, def] of Object.entries(raw.choices ?? {})) {
    if (cname === 'Archive') {
      problems.add(
        at.pos([...base, 'choices', cname], { key: true }),
        'every template already has the consuming Archive choice (controlled by its signatories); pick another name',
      );
      continue;
    }
    choices.set(cname, compileChoice(ctx, cname, def, [...base, 'choices', cname], fields));
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
    ...pkg,
    qualifiedName: qn,
    moduleName,
    entityName,
    templateId: `${pkg.packageId}:${qn}`,
    fields,
    signatories,
    observers,
    ensure,
    key,
    choices,
    implements: implementsMap,
  };
}
