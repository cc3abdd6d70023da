import type { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import type { PackageSignature } from '../../daml-lf/package-signature.js';
import type { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { checkModelReferences } from './check-model-references.js';
import type { TemplateContext } from './compile-implements.js';
import { compileTemplate, type BoundTemplate } from './compile-template.js';
import { DarDefinitions } from './dar-definitions.js';
import { matchDeclaredFields, matchDeclaredType } from './match-declared-type.js';
import type { ModelProblems } from './model-error.js';
import { ModelExpressions } from './model-expressions.js';
import type { ModelLocator } from './model-locator.js';
import { modelArchive } from './model-archive.js';
import { modelSignature } from './model-signature.js';
import type {
  InterfaceChoiceDef,
  InterfaceDef,
  InterfaceInstanceDef,
  PackageModel,
  TemplateDef,
} from './model-types.js';
import type { RawInterface, RawModel } from './raw-model.js';

/**
 * Compiles a schema-valid model file into a PackageModel. Every mistake the schema cannot see
 * (types, references, CEL, mismatches with a DAR) is added to `problems`; the result is only
 * meant to be used when none were.
 *
 * `packages`: what was loaded before (DARs, earlier models). A model whose package name and
 * version are those of a DAR's package describes that package (its templates run as the model
 * says, with the DAR's types); any other model is a package of its own, whose id is the hash of
 * the archive made of its signature.
 */
export function compileModel(
  raw: RawModel,
  at: ModelLocator,
  cel: CelEnvironment,
  problems: ModelProblems,
  packages: PackageCatalogue,
): PackageModel {
  const { name, version } = raw.package;
  const dar = DarDefinitions.of(packages);
  // Only a DAR's package (a model's own signature says lfVersion "model").
  const bound =
    packages.packagesNamed(name).find((p) => p.version === version && p.lfVersion !== 'model') ??
    null;
  const exprs = new ModelExpressions(at, cel, problems);
  const packageId = bound?.packageId ?? '';
  const partial = { at, problems, exprs, dar, packageId, packageName: name };
  const interfaces =
    bound === null
      ? ownInterfaces(partial, raw.interfaces ?? {})
      : boundInterfaces(partial, raw.interfaces ?? {}, bound);
  const darTemplates = new Map<string, BoundTemplate>();
  for (const m of bound?.modules ?? []) {
    for (const t of m.templates) {
      const def = dar.template(bound!, m.name, t);
      const key = t.key === null ? null : dar.types.of(t.key);
      darTemplates.set(def.qualifiedName, { def, key, label: `${name} ${version}` });
    }
  }
  const ctx: TemplateContext = {
    ...partial,
    interfaces,
    names: new Set([
      ...Object.keys(raw.templates ?? {}),
      ...darTemplates.keys(),
      ...interfaces.keys(),
    ]),
  };
  const templates = new Map<string, TemplateDef>();
  for (const [qn, def] of Object.entries(raw.templates ?? {})) {
    if (interfaces.has(qn)) {
      problems.add(
        at.pos(['templates', qn], { key: true }),
        `"${qn}" is declared both as an interface and as a template`,
      );
      continue;
    }
    const base = darTemplates.get(qn) ?? null;
    if (bound !== null && base === null) {
      problems.add(
        at.pos(['templates', qn], { key: true }),
        `package ${name} ${version} (from the DAR) has no template ${qn} (its templates: ${[...darTemplates.keys()].join(', ') || 'none'}); a model that describes a DAR's package can only give its templates behaviour`,
      );
      continue;
    }
    templates.set(qn, compileTemplate(ctx, qn, def, base));
  }
  // The DAR's templates the model does not describe run without behaviour.
  for (const [qn, t] of darTemplates) if (!templates.has(qn)) templates.set(qn, t.def);
  checkModelReferences(templates, interfaces, at, problems, bound === null);
  const model: PackageModel = {
    file: at.file,
    name,
    version,
    packageId,
    templates,
    interfaces,
    source: bound === null ? 'model' : 'dar',
    archive: null,
  };
  if (bound !== null || problems.size > 0) return model;
  const archive = modelArchive(modelSignature(model));
  return { ...withPackageId(model, archive.packageId), archive };
}

type InterfaceContext = Omit<TemplateContext, 'interfaces' | 'names'>;

const UNIT = { kind: 'Unit' } as const;

/** A model's own interfaces, declared in the file; their package id is filled in later. */
function ownInterfaces(
  ctx: InterfaceContext,
  raw: Readonly<Record<string, RawInterface>>,
): Map<string, InterfaceDef> {
  const out = new Map<string, InterfaceDef>();
  for (const [qn, def] of Object.entries(raw)) {
    const choices = new Map<string, InterfaceChoiceDef>();
    for (const [cname, c] of Object.entries(def.choices ?? {})) {
      const path = ['interfaces', qn, 'choices', cname];
      if (cname === 'Archive') {
        ctx.problems.add(
          ctx.at.pos(path, { key: true }),
          'Archive is every template’s own choice; an interface cannot declare it',
        );
        continue;
      }
      choices.set(cname, {
        name: cname,
        consuming: c.consuming ?? true,
        argument: ctx.exprs.fields(c.argument ?? {}, [...path, 'argument']),
        returns: c.returns === undefined ? UNIT : ctx.exprs.type(c.returns, [...path, 'returns']),
      });
    }
    // Every interface has the consuming Archive, as in Daml: each template's own Archive.
    choices.set('Archive', { name: 'Archive', consuming: true, argument: [], returns: UNIT });
    out.set(qn, {
      packageId: ctx.packageId,
      packageName: ctx.packageName,
      qualifiedName: qn,
      interfaceId: `${ctx.packageId}:${qn}`,
      viewType: ctx.exprs.recordType(def.view, ['interfaces', qn, 'view']),
      choices,
    });
  }
  return out;
}

/**
 * The interfaces of the DAR's package a model describes. The model may repeat some of them:
 * their views and choices must then match the DAR's.
 */
function boundInterfaces(
  ctx: InterfaceContext,
  raw: Readonly<Record<string, RawInterface>>,
  pkg: PackageSignature,
): Map<string, InterfaceDef> {
  const out = new Map<string, InterfaceDef>();
  for (const m of pkg.modules) {
    for (const i of m.interfaces) {
      const def = ctx.dar.interfaceDef({ packageId: pkg.packageId, module: m.name, name: i.name });
      if (def !== undefined) out.set(def.qualifiedName, def);
    }
  }
  for (const [qn, declared] of Object.entries(raw)) {
    const path = ['interfaces', qn];
    const def = out.get(qn);
    if (def === undefined) {
      ctx.problems.add(
        ctx.at.pos(path, { key: true }),
        `package ${pkg.name} ${pkg.version} (from the DAR) has no interface ${qn} (its interfaces: ${[...out.keys()].join(', ') || 'none'})`,
      );
      continue;
    }
    const view = def.viewType;
    const fields = ctx.exprs.fields(declared.view, [...path, 'view']);
    const mismatches =
      view.kind === 'Record'
        ? matchDeclaredFields(fields, view.fields)
        : [{ field: '', where: 'missing' as const, problem: `the DAR's view is not a record` }];
    for (const mm of mismatches) {
      ctx.problems.add(
        ctx.at.pos(mm.where === 'declared' ? [...path, 'view', mm.field] : [...path, 'view'], {
          key: true,
        }),
        `${mm.problem} (view of ${qn})`,
      );
    }
    for (const [cname, c] of Object.entries(declared.choices ?? {})) {
      const cpath = [...path, 'choices', cname];
      const actual = def.choices.get(cname);
      if (actual === undefined) {
        ctx.problems.add(
          ctx.at.pos(cpath, { key: true }),
          `the DAR's interface ${qn} has no choice "${cname}" (its choices: ${[...def.choices.keys()].join(', ') || 'none'})`,
        );
        continue;
      }
      const problems: string[] = [];
      if (c.consuming !== undefined && c.consuming !== actual.consuming) {
        problems.push(`the DAR's ${cname} is ${actual.consuming ? 'consuming' : 'non-consuming'}`);
      }
      if (c.argument !== undefined) {
        const declaredArgument = ctx.exprs.fields(c.argument, [...cpath, 'argument']);
        for (const mm of matchDeclaredFields(declaredArgument, actual.argument)) {
          problems.push(`argument: ${mm.problem}`);
        }
      }
      if (c.returns !== undefined) {
        const p = matchDeclaredType(
          ctx.exprs.type(c.returns, [...cpath, 'returns']),
          actual.returns,
        );
        if (p !== null) problems.push(`result: ${p}`);
      }
      for (const p of problems) ctx.problems.add(ctx.at.pos(cpath, { key: true }), p);
    }
  }
  return out;
}

/**
 * The model with its own package's id filled in (it was `''` while compiling): in every
 * template and interface id, and in the implementations of its own interfaces.
 */
function withPackageId(model: PackageModel, packageId: string): PackageModel {
  const interfaces = new Map<string, InterfaceDef>();
  for (const [qn, i] of model.interfaces) {
    interfaces.set(qn, { ...i, packageId, interfaceId: `${packageId}:${qn}` });
  }
  const templates = new Map<string, TemplateDef>();
  for (const [qn, t] of model.templates) {
    const implementsMap = new Map<string, InterfaceInstanceDef>();
    for (const [id, instance] of t.implements) {
      const own = instance.interface.packageId === model.packageId;
      const iface = own ? interfaces.get(instance.interface.qualifiedName)! : instance.interface;
      implementsMap.set(own ? iface.interfaceId : id, { ...instance, interface: iface });
    }
    templates.set(qn, {
      ...t,
      packageId,
      templateId: `${packageId}:${qn}`,
      implements: implementsMap,
    });
  }
  return { ...model, packageId, templates, interfaces };
}
