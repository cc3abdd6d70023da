import type { CelProgram } from './cel/cel-program.js';
import type { CompiledRule, RuleSet } from './compiled-rule.js';

/**
 * The shape of a compiled rule set read back from JSON (compiled-rule-codec.ts): every field
 * evaluation and the runtime read, with its type, so that data from a damaged or foreign cache
 * is refused at start instead of failing later. It cannot tell whether the rules are the ones the
 * files say (the cache's key does that); it only keeps malformed data out.
 */
export class MalformedRuleSet extends Error {}

type Obj = Record<string, unknown>;

function fail(what: string, at: string): never {
  throw new MalformedRuleSet(`${what} at ${at}`);
}

function obj(x: unknown, at: string): Obj {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) fail('no object', at);
  return x as Obj;
}

function arr(x: unknown, at: string): unknown[] {
  if (!Array.isArray(x)) fail('no list', at);
  return x;
}

function str(x: unknown, at: string): void {
  if (typeof x !== 'string') fail('no text', at);
}

function num(x: unknown, at: string): void {
  if (typeof x !== 'number' || !Number.isFinite(x)) fail('no number', at);
}

function bool(x: unknown, at: string): void {
  if (typeof x !== 'boolean') fail('no boolean', at);
}

function oneOf(x: unknown, values: readonly unknown[], at: string): void {
  if (!values.includes(x)) fail(`not one of ${values.join(', ')}`, at);
}

function strs(x: unknown, at: string): void {
  arr(x, at).forEach((s) => str(s, at));
}

function numbers(x: unknown, at: string): void {
  arr(x, at).forEach((s) => num(s, at));
}

function pos(x: unknown, at: string): void {
  const p = obj(x, at);
  str(p.file, 'file');
  num(p.line, 'line');
  num(p.col, 'col');
}

function templateRef(x: unknown, at: string): void {
  const t = obj(x, at);
  oneOf(t.form, ['package-name', 'package-id'], 'form');
  for (const k of ['text', 'module', 'entity', 'qualifiedName']) str(t[k], k);
  str(t.form === 'package-name' ? t.packageName : t.packageId, at);
}

function isProgram(x: unknown): x is CelProgram {
  return typeof x === 'object' && x !== null && typeof (x as CelProgram).evaluate === 'function';
}

function expression(x: unknown, at: string): void {
  const e = obj(x, at);
  str(e.source, 'source');
  if (!isProgram(e.program) || e.program.source !== e.source) fail('no program', 'program');
  pos(e.pos, 'pos');
}

function rendering(x: unknown, at: string): void {
  const r = obj(x, at);
  switch (r.kind) {
    case 'Date':
    case 'Time':
    case 'Int':
      return;
    case 'Numeric':
      return num(r.scale, 'scale');
    case 'Optional':
    case 'List':
    case 'TextMap':
      return rendering(r.of, 'of');
    case 'Record':
    case 'Variant':
      if (!(r.parts instanceof Map)) fail('no map', 'parts');
      for (const [k, v] of r.parts) {
        str(k, 'parts');
        rendering(v, 'parts');
      }
      return;
    default:
      fail('an unknown rendering', at);
  }
}

function value(x: unknown, at: string): void {
  const v = obj(x, at);
  switch (v.kind) {
    case 'literal':
      return;
    case 'expression':
      expression(v.expression, 'expression');
      if (v.rendering !== undefined) rendering(v.rendering, 'rendering');
      return;
    case 'interpolation':
      arr(v.parts, 'parts').forEach((p) => {
        if (typeof p !== 'string') expression(p, 'parts');
      });
      return pos(v.pos, 'pos');
    case 'list':
      arr(v.items, 'items').forEach((item) => value(item, 'items'));
      return pos(v.pos, 'pos');
    case 'record':
      arr(v.fields, 'fields').forEach((f) => {
        const field = obj(f, 'fields');
        str(field.name, 'name');
        value(field.value, 'value');
      });
      return pos(v.pos, 'pos');
    default:
      fail('an unknown value kind', at);
  }
}

function valueOrNull(x: unknown, at: string): void {
  if (x !== null) value(x, at);
}

const REF_KINDS = ['template', 'interface'];

function trigger(x: unknown, at: string): void {
  const t = obj(x, at);
  pos(t.pos, 'pos');
  if (t.kind === 'exercised') {
    str(t.choice, 'choice');
    if (t.consuming !== null) bool(t.consuming, 'consuming');
  }
  switch (t.kind) {
    case 'exercised':
    case 'created':
    case 'archived':
      templateRef(t.template, 'template');
      oneOf(t.refKind, REF_KINDS, 'refKind');
      return str(t.party, 'party');
    case 'schedule': {
      str(t.cron, 'cron');
      const c = obj(t.cronSpec, 'cronSpec');
      for (const k of ['seconds', 'minutes', 'hours', 'daysOfMonth', 'months', 'daysOfWeek']) {
        numbers(c[k], k);
      }
      bool(c.dayOfMonthStar, 'cronSpec');
      bool(c.dayOfWeekStar, 'cronSpec');
      str(t.timezone, 'timezone');
      oneOf(t.catchUp, ['none', 'last', 'all'], 'catchUp');
      num(t.maxCatchUp, 'maxCatchUp');
      num(t.jitterMs, 'jitterMs');
      if (t.forEach === null) return;
      const f = obj(t.forEach, 'forEach');
      templateRef(f.template, 'template');
      oneOf(f.refKind, REF_KINDS, 'refKind');
      str(f.party, 'party');
      pos(f.pos, 'pos');
      if (f.batch === null) return;
      const b = obj(f.batch, 'batch');
      num(b.size, 'size');
      num(b.min, 'min');
      if (b.groupBy !== null) expression(b.groupBy, 'groupBy');
      return pos(b.pos, 'pos');
    }
    default:
      fail('an unknown trigger', at);
  }
}

function action(x: unknown, at: string): void {
  const a = obj(x, at);
  num(a.index, 'index');
  strs(a.actAs, 'actAs');
  strs(a.readAs, 'readAs');
  valueOrNull(a.workflowId, 'workflowId');
  valueOrNull(a.disclosedContracts, 'disclosedContracts');
  pos(a.pos, 'pos');
  templateRef(a.template, 'template');
  switch (a.kind) {
    case 'create':
      return value(a.createArguments, 'createArguments');
    case 'exercise':
      oneOf(a.refKind, REF_KINDS, 'refKind');
      value(a.contractId, 'contractId');
      break;
    case 'exerciseByKey':
      value(a.contractKey, 'contractKey');
      break;
    case 'createAndExercise':
      value(a.createArguments, 'createArguments');
      break;
    default:
      fail('an unknown action', at);
  }
  str(a.choice, 'choice');
  value(a.choiceArgument, 'choiceArgument');
}

function fieldTrie(x: unknown, at: string, depth: number): void {
  if (depth > 200) fail('too deep', at);
  const t = obj(x, at);
  bool(t.fillable, 'fillable');
  arr(t.children, 'children').forEach((c) => {
    const pair = arr(c, 'children');
    str(pair[0], 'children');
    fieldTrie(pair[1], 'children', depth + 1);
  });
}

function rule(x: unknown, at: string): CompiledRule {
  const r = obj(x, at);
  str(r.id, 'id');
  num(r.revision, 'revision');
  str(r.description, 'description');
  bool(r.enabled, 'enabled');
  for (const v of Object.values(obj(r.labels, 'labels'))) str(v, 'labels');
  trigger(r.trigger, 'trigger');
  arr(r.when, 'when').forEach((c) => {
    expression(c, 'when');
    num((c as Obj).index, 'index');
  });
  const then = arr(r.then, 'then');
  if (then.length === 0) fail('no action', 'then');
  then.forEach((a) => action(a, 'then'));
  const o = obj(r.options, 'options');
  const retry = obj(o.retry, 'retry');
  for (const k of ['maxAttempts', 'initialDelayMs', 'maxDelayMs', 'deadlineMs']) {
    num(retry[k], k);
  }
  const rate = obj(o.rateLimit, 'rateLimit');
  num(rate.perSecond, 'perSecond');
  num(rate.burst, 'burst');
  num(o.concurrency, 'concurrency');
  pos(r.pos, 'pos');
  if (r.fieldReads !== undefined && r.fieldReads !== null) fieldTrie(r.fieldReads, at, 0);
  return r as CompiledRule;
}

/**
 * `x` as a RuleSet; throws MalformedRuleSet, naming the rule and the field, when it is not one.
 * (The field is named, not its whole path: building every path as text made the check slow.)
 */
export function checkRuleSet(x: unknown): RuleSet {
  const set = obj(x, 'the rule set');
  arr(set.rules, 'rules').forEach((r, i) => {
    try {
      rule(r, 'rule');
    } catch (error) {
      if (error instanceof MalformedRuleSet) {
        throw new MalformedRuleSet(`rule ${i + 1}: ${error.message}`);
      }
      throw error;
    }
  });
  for (const w of arr(set.warnings, 'warnings')) {
    const p = obj(w, 'warning');
    pos(p, 'warning');
    str(p.code, 'code');
    oneOf(p.severity, ['warning'], 'severity');
    str(p.message, 'message');
    if (p.hint !== undefined) str(p.hint, 'hint');
  }
  return set as RuleSet;
}
