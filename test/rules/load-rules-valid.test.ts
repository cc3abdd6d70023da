import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/core/defaults.js';
import type { CompiledRule, CompiledValue } from '../../src/rules/compiled-rule.js';
import { loadRules, loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { RuleError } from '../../src/rules/rule-error.js';
import { INVOICES_WITH_AUDIT } from './invoices-catalogue.js';

const DIR = new URL('../fixtures/rules/valid/', import.meta.url);
const OPTIONS = { parties: ['payer', 'issuer'], packages: INVOICES_WITH_AUDIT };

function loadValid(): CompiledRule[] {
  const files = readdirSync(DIR)
    .sort()
    .map((name) => ({ path: name, text: readFileSync(new URL(name, DIR), 'utf8') }));
  const { ruleSet, problems } = loadRules(files, OPTIONS);
  expect(problems).toEqual([]);
  return [...ruleSet.rules];
}

function rule(id: string): CompiledRule {
  const found = loadValid().find((r) => r.id === id);
  if (found === undefined) throw new Error(`no rule ${id}`);
  return found;
}

/** Evaluates a compiled value the simple way, to check what the compiler built. */
function evalValue(v: CompiledValue, vars: Record<string, unknown>): unknown {
  switch (v.kind) {
    case 'literal':
      return v.value;
    case 'expression':
      return v.expression.program.evaluate(vars);
    case 'interpolation':
      return v.parts
        .map((p) => (typeof p === 'string' ? p : String(p.program.evaluate(vars))))
        .join('');
    case 'list':
      return v.items.map((i) => evalValue(i, vars));
    case 'record':
      return Object.fromEntries(v.fields.map((f) => [f.name, evalValue(f.value, vars)]));
  }
}

describe('loadRules: valid files', () => {
  it('loads every valid fixture and the shipped examples without problems', () => {
    expect(loadValid().map((r) => r.id)).toEqual([
      'accept-small-invoices',
      'every-field',
      'exercised-any',
      'monthly-once',
      'settle-accepted-invoices',
      'weekday-reminders',
    ]);
  });

  it('compiles an event rule: trigger, conditions with positions, typed and interpolated templates', () => {
    const r = rule('accept-small-invoices');
    expect(r.trigger).toEqual({
      kind: 'created',
      template: {
        form: 'package-name',
        text: '#invoices:Invoice:Invoice',
        packageName: 'invoices',
        module: 'Invoice',
        entity: 'Invoice',
        qualifiedName: 'Invoice:Invoice',
      },
      refKind: 'template',
      party: 'payer',
      pos: { file: 'accept-small-invoices.yaml', line: 10, col: 7 },
    });
    expect(r.when.map((c) => [c.index, c.pos.line, c.pos.col])).toEqual([
      [0, 13, 9],
      [1, 14, 9],
      [2, 15, 9],
    ]);
    const event = {
      createArgument: { payer: 'P::1', currency: 'USD', amount: '999.99', reference: 'INV-7' },
      contractId: '00ab',
    };
    const vars = { event, parties: { payer: 'P::1' } };
    expect(r.when.map((c) => c.program.evaluate(vars))).toEqual([true, true, true]);
    expect(
      r.when[2]!.program.evaluate({
        ...vars,
        event: { ...event, createArgument: { ...event.createArgument, amount: '1000.00' } },
      }),
    ).toBe(false);
    const action = r.then[0]!;
    expect(action.kind).toBe('createAndExercise');
    if (action.kind !== 'createAndExercise') return;
    expect(action.actAs).toEqual(['payer']);
    expect(action.choice).toBe('AcceptInvoice');
    expect(evalValue(action.createArguments, vars)).toEqual({ payer: 'P::1' });
    expect(evalValue(action.choiceArgument, vars)).toEqual({ invoice: '00ab' });
    expect(action.workflowId?.kind).toBe('interpolation');
    expect(evalValue(action.workflowId!, vars)).toBe('invoice-INV-7');
    expect(r.options).toEqual({
      retry: { maxAttempts: 5, initialDelayMs: 1000, maxDelayMs: 30_000, deadlineMs: 600_000 },
      rateLimit: { perSecond: 20, burst: 40 },
      concurrency: 4,
    });
    expect(r.labels).toEqual({ team: 'accounts-payable' });
    expect(r.revision).toBe(1);
    expect(r.enabled).toBe(true);
  });

  it('keeps a whole-value template typed and folds template-free subtrees into literals', () => {
    const r = rule('every-field');
    const create = r.then[0]!;
    if (create.kind !== 'create') throw new Error('expected create');
    expect(create.createArguments.kind).toBe('record');
    const vars = {
      event: { contractId: 'c1', offset: 42, disclosed: { contractId: 'd' } },
      parties: { payer: 'P', issuer: 'I' },
      rule: { id: 'every-field', revision: 3 },
    };
    expect(evalValue(create.createArguments, vars)).toEqual({
      payer: 'P',
      payee: 'I',
      amount: '25',
      currency: 'USD',
      reference: 'archived c1 at offset 42',
    });
    // A whole value keeps its type: the offset stays a number, the disclosed contract an object.
    const offset = create.createArguments.kind === 'record' ? create.createArguments.fields : [];
    expect(offset.find((f) => f.name === 'currency')!.value).toEqual({
      kind: 'literal',
      value: 'USD',
    });
    expect(evalValue(create.disclosedContracts!, vars)).toEqual([
      { contractId: 'd' },
      { contractId: 'c1', createdEventBlob: 'AAAA' },
    ]);
    expect(evalValue(create.workflowId!, vars)).toBe('every-field-3');
    expect(create.readAs).toEqual(['payer']);
    expect(create.actAs).toEqual(['issuer']);
    const byKey = r.then[1]!;
    expect(byKey.kind).toBe('exerciseByKey');
    if (byKey.kind === 'exerciseByKey') {
      expect(byKey.index).toBe(1);
      expect(evalValue(byKey.choiceArgument, vars)).toEqual({ note: null });
      expect(evalValue(byKey.contractKey, vars)).toEqual({ issuer: 'I', reference: 'fixed' });
    }
    expect(r.enabled).toBe(false);
    expect(r.revision).toBe(3);
    expect(r.trigger.kind).toBe('archived');
    expect(r.options).toEqual({
      retry: {
        maxAttempts: 10,
        initialDelayMs: 250,
        maxDelayMs: 5_400_000,
        deadlineMs: 86_400_000,
      },
      rateLimit: { perSecond: 0.5, burst: 1 },
      concurrency: 1,
    });
    // A folded block scalar: the condition is the joined text.
    expect(r.when[0]!.source).toBe('event.offset > 0 && event.workflowId != "skip"');
  });

  it('compiles an exercised trigger; consuming absent matches both', () => {
    const r = rule('exercised-any');
    expect(r.trigger).toMatchObject({
      kind: 'exercised',
      choice: 'Remind',
      consuming: null,
      party: 'payer',
    });
    expect(rule('settle-accepted-invoices').trigger).toMatchObject({
      kind: 'exercised',
      choice: 'Accept',
      consuming: true,
    });
    const create = r.then[0]!;
    if (create.kind !== 'create') throw new Error('expected create');
    const now = new Date('2025-03-01T10:00:00Z');
    expect(evalValue(create.createArguments, { event: { exerciseResult: 'hello' }, now })).toEqual({
      note: 'hello',
      tags: [now, 'literal'],
    });
  });

  it('compiles schedule rules with and without forEach, with defaults', () => {
    const weekly = rule('weekday-reminders');
    expect(weekly.trigger).toMatchObject({
      kind: 'schedule',
      cron: '0 9 * * MON-FRI',
      timezone: 'Europe/Zurich',
      catchUp: 'last',
      maxCatchUp: 10,
      jitterMs: 0,
      forEach: { party: 'issuer', template: { qualifiedName: 'Invoice:Invoice' } },
      cronSpec: {
        minutes: [0],
        hours: [9],
        daysOfWeek: [1, 2, 3, 4, 5],
        dayOfWeekStar: false,
        dayOfMonthStar: true,
      },
    });
    const today = new Date('2025-03-10T00:00:00Z');
    expect(
      weekly.when[0]!.program.evaluate({
        contract: { createArgument: { due: '2025-03-09' } },
        today,
      }),
    ).toBe(true);
    expect(
      weekly.when[0]!.program.evaluate({
        contract: { createArgument: { due: '2025-03-10' } },
        today,
      }),
    ).toBe(false);
    const monthly = rule('monthly-once');
    expect(monthly.trigger).toMatchObject({
      kind: 'schedule',
      forEach: null,
      timezone: 'America/New_York',
      catchUp: 'all',
      maxCatchUp: 3,
      jitterMs: 30_000,
      cronSpec: { minutes: [0], hours: [0], daysOfMonth: [1] },
    });
  });

  it('takes retry fields a rule does not write from the bot config, and keeps the ones it does', () => {
    const text = (retry: string): string => `version: 1
rules:
  - id: r1
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Remind, choiceArgument: {} }
        actAs: [payer]
${retry}`;
    const defaultRetry = {
      maxAttempts: 9,
      initialDelayMs: 2000,
      maxDelayMs: 90_000,
      deadlineMs: 3_600_000,
    };
    const unset = loadRulesOrThrow([{ path: 'a.yaml', text: text('') }], { defaultRetry });
    expect(unset.rules[0]!.options.retry).toEqual(defaultRetry);
    const partly = loadRulesOrThrow(
      [{ path: 'b.yaml', text: text('    retry: { maxAttempts: 3, deadline: 5m }') }],
      { defaultRetry },
    );
    expect(partly.rules[0]!.options.retry).toEqual({
      ...defaultRetry,
      maxAttempts: 3,
      deadlineMs: 300_000,
    });
    // Without a config default, the one table of defaults applies.
    const plain = loadRulesOrThrow([{ path: 'c.yaml', text: text('') }]);
    expect(plain.rules[0]!.options.retry).toEqual({
      maxAttempts: 10,
      initialDelayMs: 1000,
      maxDelayMs: 60_000,
      deadlineMs: 3_600_000,
    });
    expect(plain.rules[0]!.options.retry).toEqual(DEFAULTS.retry);
  });

  it('freezes the compiled rule set', () => {
    const { ruleSet } = loadRules(
      [{ path: 'a.yaml', text: readFileSync(new URL('all-features.yaml', DIR), 'utf8') }],
      OPTIONS,
    );
    const r = ruleSet.rules[0]!;
    expect(Object.isFrozen(ruleSet)).toBe(true);
    expect(Object.isFrozen(r)).toBe(true);
    expect(Object.isFrozen(r.then[0])).toBe(true);
    expect(Object.isFrozen(r.labels)).toBe(true);
    expect(() => {
      (r as { id: string }).id = 'changed';
    }).toThrow(TypeError);
  });

  it('loadRulesOrThrow returns the rule set, or throws RuleError with every problem', () => {
    const text = readFileSync(new URL('weekday-reminders.yaml', DIR), 'utf8');
    expect(loadRulesOrThrow([{ path: 'w.yaml', text }]).rules).toHaveLength(1);
    const broken = text.replace('MON-FRI', 'MON-FRY').replace('Europe/Zurich', 'Mars/Base');
    const error = (() => {
      try {
        loadRulesOrThrow([{ path: 'w.yaml', text: broken }]);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(RuleError);
    const ruleError = error as RuleError;
    expect(ruleError.code).toBe('INVALID_RULES');
    expect(ruleError.problems.map((p) => p.code)).toEqual(['BAD_CRON', 'BAD_TIMEZONE']);
    expect(ruleError.message).toContain(
      'w.yaml:8:26: bad cron expression "0 9 * * MON-FRY": "FRY" is not a valid day of week',
    );
  });

  it('accepts an empty rule list, and a rule list in several files', () => {
    expect(loadRules([{ path: 'e.yaml', text: 'version: 1\nrules: []\n' }]).problems).toEqual([]);
  });
});
