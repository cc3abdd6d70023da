import type { YamlPath } from '../../core/yaml-locator.js';
import { compileChoice, type ChoiceTypes } from './compile-choice.js';
import { compileImplements, type TemplateContext } from './compile-implements.js';
import { archiveChoice } from './dar-definitions.js';
import { matchDeclaredFields, matchDeclaredType } from './match-declared-type.js';
import type { ChoiceDef, DamlType, FieldDef, KeyDef, TemplateDef } from './model-types.js';
import type { RawChoice, RawTemplate } from './raw-model.js';

/** The DAR's template a model's template describes: what the model's declarations must match. */
export type BoundTemplate = {
  /** The template as it runs without a model (its types; no behaviour). */
  readonly def: TemplateDef;
  /** The DAR's key type, or null when it declares no key. */
  readonly key: DamlType | null;
  /** `name version` of the DAR's package, for messages. */
  readonly label: string;
};

/**
 * One template of a model file. Without `bound`, the model declares everything. With it (the
 * model describes a DAR's package), the DAR's types win: declared fields, choice arguments and
 * results, consuming flags and key types must match them (each mismatch a located problem), and
 * what is left out is taken from the DAR; the DAR's choices the model does not implement fail
 * when exercised.
 */
export function compileTemplate(
  ctx: TemplateContext,
  qn: string,
  raw: RawTemplate,
  bound: BoundTemplate | null,
): TemplateDef {
  const { at, exprs, problems } = ctx;
  const base: YamlPath = ['templates', qn];
  const fields = templateFields(ctx, qn, raw, bound);
  const thisScope = ['this'];
  const signatories = exprs.parties(raw.signatories, [...base, 'signatories'], [fields], thisScope);
  const observers = exprs.parties(raw.observers ?? [], [...base, 'observers'], [fields], thisScope);
  const ensure =
    raw.ensure === undefined ? null : exprs.expr(raw.ensure, [...base, 'ensure'], thisScope);
  let key: KeyDef | null = null;
  if (raw.key !== undefined) {
    let type = exprs.type(raw.key.type, [...base, 'key', 'type']);
    if (bound !== null) {
      const problem =
        bound.key === null
          ? `the DAR's template ${qn} (${bound.label}) has no key`
          : matchDeclaredType(type, bound.key);
      if (problem !== null) problems.add(at.pos([...base, 'key', 'type']), problem);
      type = bound.key ?? type;
    }
    key = {
      type,
      value: exprs.value(raw.key.value, [...base, 'key', 'value'], thisScope),
      maintainers: exprs.parties(
        raw.key.maintainers,
        [...base, 'key', 'maintainers'],
        [fields],
        thisScope,
      ),
    };
  }
  const archive = archiveChoice(signatories);
  const implementsMap = compileImplements(
    ctx,
    raw.implements ?? {},
    [...base, 'implements'],
    { fields, archive },
    bound?.def ?? null,
  );
  const choices = new Map<string, ChoiceDef>();
  for (const [cname, def] of Object.entries(raw.choices ?? {})) {
    const path = [...base, 'choices', cname];
    if (cname === 'Archive') {
      problems.add(
        at.pos(path, { key: true }),
        'every template already has the consuming Archive choice (controlled by its signatories); pick another name',
      );
      continue;
    }
    const types = choiceTypes(ctx, qn, cname, def, path, bound);
    if (types !== null) choices.set(cname, compileChoice(ctx, cname, def, types, path, fields));
  }
  for (const [cname, c] of bound?.def.choices ?? []) {
    if (!choices.has(cname) && cname !== 'Archive') choices.set(cname, c);
  }
  choices.set('Archive', archive);
  const [moduleName, entityName] = qn.split(':') as [string, string];
  return {
    packageId: ctx.packageId,
    packageName: ctx.packageName,
    qualifiedName: qn,
    moduleName,
    entityName,
    templateId: `${ctx.packageId}:${qn}`,
    fields,
    behaviour: 'model',
    signatories,
    observers,
    ensure,
    key,
    choices,
    implements: implementsMap,
  };
}

/** The template's fields: declared, or the DAR's (the declared ones checked against them). */
function templateFields(
  ctx: TemplateContext,
  qn: string,
  raw: RawTemplate,
  bound: BoundTemplate | null,
): readonly FieldDef[] {
  const path: YamlPath = ['templates', qn, 'fields'];
  if (bound === null) {
    if (raw.fields !== undefined) return ctx.exprs.fields(raw.fields, path);
    ctx.problems.add(
      ctx.at.pos(['templates', qn], { key: true }),
      `template ${qn} needs "fields": only a model that describes a DAR's package (same package name and version) may leave them out, to take the DAR's`,
    );
    return [];
  }
  if (raw.fields !== undefined) {
    const declared = ctx.exprs.fields(raw.fields, path);
    for (const m of matchDeclaredFields(declared, bound.def.fields)) {
      ctx.problems.add(
        ctx.at.pos(m.where === 'declared' ? [...path, m.field] : path, { key: true }),
        `${m.problem} (template ${qn} of ${bound.label})`,
      );
    }
  }
  return bound.def.fields;
}

/** A template choice's types: declared, or the DAR's (what is declared checked against them). */
function choiceTypes(
  ctx: TemplateContext,
  qn: string,
  cname: string,
  raw: RawChoice,
  path: YamlPath,
  bound: BoundTemplate | null,
): ChoiceTypes | null {
  const { at, exprs, problems } = ctx;
  if (bound === null) {
    return {
      consuming: raw.consuming ?? true,
      argument: exprs.fields(raw.argument ?? {}, [...path, 'argument']),
      returns: raw.returns === undefined ? null : exprs.type(raw.returns, [...path, 'returns']),
    };
  }
  const declared = bound.def.choices.get(cname);
  if (declared === undefined) {
    const names = [...bound.def.choices.keys()].filter((n) => n !== 'Archive');
    problems.add(
      at.pos(path, { key: true }),
      `the DAR's template ${qn} (${bound.label}) has no choice "${cname}" (its choices: ${names.join(', ') || 'none'})`,
    );
    return null;
  }
  if (raw.consuming !== undefined && raw.consuming !== declared.consuming) {
    problems.add(
      at.pos([...path, 'consuming']),
      `the DAR's ${cname} is ${declared.consuming ? 'consuming' : 'non-consuming'}`,
    );
  }
  if (raw.argument !== undefined) {
    const fields = exprs.fields(raw.argument, [...path, 'argument']);
    for (const m of matchDeclaredFields(fields, declared.argument)) {
      problems.add(
        at.pos(m.where === 'declared' ? [...path, 'argument', m.field] : [...path, 'argument'], {
          key: true,
        }),
        `${m.problem} (argument of ${cname})`,
      );
    }
  }
  if (raw.returns !== undefined && declared.returns !== null) {
    const problem = matchDeclaredType(
      exprs.type(raw.returns, [...path, 'returns']),
      declared.returns,
    );
    if (problem !== null)
      problems.add(at.pos([...path, 'returns']), `${problem} (result of ${cname})`);
  }
  return { consuming: declared.consuming, argument: declared.argument, returns: declared.returns };
}
