import type { YamlPath } from '../../core/yaml-locator.js';
import type { ModelProblems } from './model-error.js';
import type { ModelExpressions } from './model-expressions.js';
import type { ModelLocator } from './model-locator.js';
import type { ChoiceDef, DamlType, FieldDef, ModelExpr, Step } from './model-types.js';
import type { RawChoiceBehaviour, RawStep } from './raw-model.js';

/** What compiling a choice needs from the model compiler. */
export type ChoiceContext = {
  readonly at: ModelLocator;
  readonly problems: ModelProblems;
  readonly exprs: ModelExpressions;
  /** The templates and interfaces of the file, by `Module:Entity`. */
  readonly names: ReadonlySet<string>;
};

const STEP_KINDS = ['create', 'exercise', 'fetch', 'assert'] as const;
type StepKind = (typeof STEP_KINDS)[number];

const STEP_KEYS: Readonly<Record<StepKind, readonly string[]>> = {
  create: ['create', 'with', 'as'],
  exercise: ['exercise', 'on', 'template', 'argument', 'as'],
  fetch: ['fetch', 'template', 'as'],
  assert: ['assert', 'message'],
};

/** A choice's types, from the model file or from the package that declares the choice. */
export type ChoiceTypes = {
  readonly consuming: boolean;
  readonly argument: readonly FieldDef[];
  readonly returns: DamlType | null;
};

/**
 * A choice's behaviour (controllers, observers, body, result) compiled against its types: a
 * template's own choice, or a template's implementation of an interface's choice.
 */
export function compileChoice(
  ctx: ChoiceContext,
  name: string,
  raw: RawChoiceBehaviour,
  types: ChoiceTypes,
  path: YamlPath,
  fields: readonly FieldDef[],
): ChoiceDef {
  const { at, exprs, problems } = ctx;
  const { argument } = types;
  const scope = ['this', 'arg', 'self'];
  const controllers = exprs.parties(
    raw.controllers,
    [...path, 'controllers'],
    [fields, argument],
    scope,
  );
  const observers = exprs.parties(
    raw.observers ?? [],
    [...path, 'observers'],
    [fields, argument],
    scope,
  );
  const body: Step[] = [];
  const stepScope = [...scope];
  (raw.body ?? []).forEach((s, i) => {
    const step = compileStep(ctx, s, [...path, 'body', i], stepScope);
    if (step !== null) body.push(step);
    // A step that did not compile still names its result, so later steps do not fail on it.
    const stepName = s.assert === undefined ? (s.as ?? null) : null;
    if (stepName === null) return;
    if (stepScope.includes(stepName)) {
      problems.add(
        at.pos([...path, 'body', i, 'as']),
        `the name "${stepName}" is already in use in this choice: pick another one`,
      );
      return;
    }
    stepScope.push(stepName);
  });
  return {
    name,
    consuming: types.consuming,
    controllers,
    observers,
    argument,
    body,
    // Like `with:`: a CEL expression, or a YAML map of values (a record), or a constant.
    result:
      raw.result === undefined ? null : exprs.value(raw.result, [...path, 'result'], stepScope),
    returns: types.returns,
    implemented: true,
  };
}

/** One step of a choice body, or null when its shape is wrong (the problems are added). */
function compileStep(
  ctx: ChoiceContext,
  raw: RawStep,
  path: YamlPath,
  scope: readonly string[],
): Step | null {
  const { at, exprs, problems, names } = ctx;
  const kinds = STEP_KINDS.filter((k) => raw[k] !== undefined);
  const pos = at.pos(path);
  const kind = kinds[0];
  if (kind === undefined || kinds.length > 1) {
    problems.add(
      pos,
      `a step needs exactly one of create, exercise, fetch or assert${kinds.length > 1 ? ` (found ${kinds.join(' and ')})` : ''}`,
    );
    return null;
  }
  let ok = true;
  for (const k of Object.keys(raw)) {
    if (!STEP_KEYS[kind].includes(k)) {
      problems.add(
        at.pos([...path, k], { key: true }),
        `"${k}" does not belong in a ${kind} step (allowed: ${STEP_KEYS[kind].join(', ')})`,
      );
      ok = false;
    }
  }
  const need = (k: keyof RawStep): string => {
    const v = raw[k];
    if (typeof v === 'string') return v;
    problems.add(pos, `a ${kind} step needs "${k}"`);
    ok = false;
    return '';
  };
  // A missing expression was reported by need(): a stand-in keeps CEL from reporting it again.
  const cel = (k: 'on' | 'fetch' | 'assert'): ModelExpr => {
    const source = need(k);
    return source === '' ? exprs.expr('null', path, []) : exprs.expr(source, [...path, k], scope);
  };
  const template = (k: 'create' | 'template'): string => {
    const t = need(k);
    if (t !== '' && !names.has(t)) {
      problems.add(
        at.pos([...path, k]),
        `unknown template "${t}" (known: ${[...names].join(', ')})`,
      );
      ok = false;
    }
    return t;
  };
  const name = raw.as ?? null;
  let step: Step;
  switch (kind) {
    case 'create':
      if (raw.with === undefined) {
        problems.add(pos, 'a create step needs "with": the create arguments');
        return null;
      }
      step = {
        kind,
        name,
        template: template('create'),
        argument: exprs.value(raw.with, [...path, 'with'], scope),
        pos,
      };
      break;
    case 'exercise':
      step = {
        kind,
        name,
        template: template('template'),
        contractId: cel('on'),
        choice: need('exercise'),
        argument: exprs.value(raw.argument ?? {}, [...path, 'argument'], scope),
        pos,
      };
      break;
    case 'fetch':
      step = {
        kind,
        name,
        template: template('template'),
        contractId: cel('fetch'),
        pos,
      };
      break;
    case 'assert':
      step = {
        kind,
        condition: cel('assert'),
        message: raw.message ?? `assertion failed: ${raw.assert ?? ''}`,
        pos,
      };
  }
  return ok ? step : null;
}
