import { describe, expect, it } from 'vitest';
import { formatRuleProblem } from '../../src/rules/rule-problem.js';
import {
  formatRuleTestResult,
  parseRuleTestFile,
  runRuleTests,
  testPackageId,
  type RuleTestFile,
} from '../../src/rules/rule-tests/index.js';
import { specValidator } from '../support/spec-validator.js';
import { rules } from './rule-fixtures.js';

const RULES = rules(`
version: 1
rules:
  - id: accept-small
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: 'decimal(event.createArgument.amount) < decimal("1000")'
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ event.contractId }}"
          choice: Accept
          choiceArgument: { amount: "\${{ event.createArgument.amount }}" }
        actAs: [payer]
  - id: audit-remind
    on:
      exercised: { template: "#invoices:Invoice:Invoice", choice: Remind }
      party: issuer
    when: 'event.exerciseResult.size() > 0'
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: { note: "\${{ event.exerciseResult }}" } }
        actAs: [issuer]
  - id: nightly
    schedule: { cron: "0 2 * * *", timezone: Europe/Zurich }
    forEach: { activeContracts: "#invoices:Invoice:Invoice", party: issuer }
    when: 'date(contract.createArgument.due) < today'
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ contract.contractId }}"
          choice: Remind
        actAs: [issuer]
`);

function parse(text: string): RuleTestFile {
  const parsed = parseRuleTestFile('t.test.yaml', text);
  if (!parsed.ok) throw new Error(parsed.problems.map(formatRuleProblem).join('\n'));
  return parsed.file;
}

const HEAD = `
rules: ../rules
parties: { payer: &payer "Payer::1220aaaa", issuer: "Issuer::1220bbbb" }
now: 2025-03-03T09:30:00Z
tests:
`;

describe('parseRuleTestFile', () => {
  it('builds spec-valid events with aliases resolved, deterministic ids and wire numbers', () => {
    const file = parse(`${HEAD}
  - name: one
    given:
      - created:
          template: "#invoices:Invoice:Invoice"
          createArgument: { amount: 999.5, payer: *payer, lines: [1, 2] }
          witnesses: [payer]
          signatories: [issuer]
      - exercised: { template: "#invoices:Invoice:Invoice", choice: Remind, consuming: false }
      - archived: { template: "#invoices:Invoice:Invoice", contractId: "00x", offset: 9 }
    expect: []
`);
    expect(file.rules).toEqual(['../rules']);
    expect(file.parties).toEqual({ payer: 'Payer::1220aaaa', issuer: 'Issuer::1220bbbb' });
    const c = file.cases[0]!;
    expect(c.now.toISOString()).toBe('2025-03-03T09:30:00.000Z');
    const spec = specValidator('openapi-3.5');
    const [g0, g1, g2] = c.given;
    if (!g0 || !('CreatedEvent' in g0.event)) throw new Error('expected a created event');
    const ev = g0.event.CreatedEvent;
    spec.assert('CreatedEvent', ev);
    expect(ev.templateId).toBe(`${testPackageId('invoices')}:Invoice:Invoice`);
    expect(ev.packageName).toBe('invoices');
    expect(ev.createArgument).toEqual({
      amount: '999.5',
      payer: 'Payer::1220aaaa',
      lines: ['1', '2'],
    });
    expect(ev.witnessParties).toEqual(['Payer::1220aaaa']);
    expect(ev.signatories).toEqual(['Issuer::1220bbbb']);
    expect(ev.contractId).toMatch(/^00[0-9a-f]{64}$/);
    expect(g0.transaction).toMatchObject({ offset: 1, recordTime: '2025-03-03T09:30:00Z' });
    if (!g1 || !('ExercisedEvent' in g1.event)) throw new Error('expected an exercised event');
    spec.assert('ExercisedEvent', g1.event.ExercisedEvent);
    expect(g1.event.ExercisedEvent.witnessParties).toEqual(['Payer::1220aaaa', 'Issuer::1220bbbb']);
    if (!g2 || !('ArchivedEvent' in g2.event)) throw new Error('expected an archived event');
    spec.assert('ArchivedEvent', g2.event.ArchivedEvent);
    expect(g2.event.ArchivedEvent).toMatchObject({ contractId: '00x', offset: 9 });
    // Same text, same ids: reruns are reproducible.
    const again = parse(`${HEAD}
  - name: one
    given:
      - created: { template: "#invoices:Invoice:Invoice" }
    expect: []
`);
    const first = again.cases[0]!.given[0]!;
    expect(
      parse(`${HEAD}
  - name: one
    given:
      - created: { template: "#invoices:Invoice:Invoice" }
    expect: []
`).cases[0]!.given[0],
    ).toEqual(first);
  });

  it('reports every problem with file:line:col and hints', () => {
    const parsed = parseRuleTestFile(
      'bad.test.yaml',
      `rules: ../rules
parties: { payer: P }
tests:
  - name: typo
    givn: []
    expect: []
  - name: wrong time
    now: yesterday
    given: []
    expect: []
  - name: wrong type
    given: { created: {} }
    expect: []
`,
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map(formatRuleProblem)).toEqual([
      'bad.test.yaml:5:5: unknown key "givn"\n    hint: did you mean `given`?',
      'bad.test.yaml:8:10: now must be a timestamp such as 2025-03-03T09:30:00Z (with Z or an offset)',
      'bad.test.yaml:12:12: given must be a list',
    ]);
  });

  it('checks what the schema cannot: event kinds, given vs slot, expectations, templates', () => {
    const parsed = parseRuleTestFile(
      'bad.test.yaml',
      `rules: [../rules]
parties: { payer: P }
tests:
  - name: nothing to expect
    given: []
  - name: both
    given: []
    slot: 2025-03-03T02:00:00+01:00
    expect: []
  - name: two kinds
    given:
      - created: { template: "#a:B:C" }
        archived: { template: "#a:B:C" }
    expect: []
  - name: bad template
    given:
      - created: { template: "Invoice" }
    expect: []
  - name: bad template
    given: []
    expect: []
`,
    );
    if (parsed.ok) throw new Error('expected problems');
    expect(parsed.problems.map((p) => [p.line, p.col, p.code])).toEqual([
      [4, 5, 'MISSING_KEY'],
      [6, 5, 'BAD_VALUE'],
      [12, 9, 'BAD_VALUE'],
      [17, 30, 'BAD_TEMPLATE_REF'],
      [19, 11, 'BAD_VALUE'],
    ]);
    expect(parsed.problems[0]!.message).toMatch(/needs `expect:`/);
    expect(parsed.problems[3]!.hint).toMatch(/#package-name:Module:Entity/);
    expect(parsed.problems[4]!.message).toMatch(
      /duplicate test name "bad template": also at bad.test.yaml:15:5/,
    );
  });

  it('survives hostile input: alias bombs and huge files give a clear error', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 8 }, (_, i) => {
        const prev = i === 0 ? 'a' : `b${i - 1}`;
        return `b${i}: &b${i} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`;
      }),
      'rules: x',
      'parties: {}',
      'tests: [*b7]',
    ].join('\n');
    const started = performance.now();
    const parsed = parseRuleTestFile('bomb.test.yaml', bomb);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems[0]!.code).toBe('YAML_TOO_COMPLEX');
    const huge = parseRuleTestFile('huge.test.yaml', `# ${'x'.repeat(5 * 1024 * 1024)}`);
    expect(huge.ok).toBe(false);
    if (!huge.ok) expect(huge.problems[0]!.code).toBe('FILE_TOO_LARGE');
  });
});

describe('runRuleTests', () => {
  it('passes matching expectations, partially and order-insensitively', () => {
    const file = parse(`${HEAD}
  - name: two events, two commands
    given:
      - exercised: { template: "#invoices:Invoice:Invoice", choice: Remind, exerciseResult: "pay!" }
      - created:
          template: "#invoices:Invoice:Invoice"
          contractId: "00inv"
          createArgument: { amount: "999.99" }
    expect:
      - rule: accept-small
        exercise: { contractId: "00inv", choiceArgument: { amount: 999.990 } }
        actAs: [payer]
      - create: { template: "#invoices:Audit:Entry", createArguments: { note: "pay!" } }
        actAs: ["Issuer::1220bbbb"]
        workflowId: audit-remind
  - name: big invoice
    given:
      - created: { template: "#invoices:Invoice:Invoice", createArgument: { amount: "1000" } }
    expect: []
`);
    const result = runRuleTests(file, RULES);
    expect(result.cases.map((c) => [c.name, c.passed, c.failures])).toEqual([
      ['two events, two commands', true, []],
      ['big invoice', true, []],
    ]);
    expect(result).toMatchObject({ passed: 2, failed: 0 });
    expect(formatRuleTestResult(result)).toBe(
      't.test.yaml\n  ✓ two events, two commands\n  ✓ big invoice\n',
    );
  });

  it('fails with a diff against the closest command, and explains unexpected ones', () => {
    const file = parse(`${HEAD}
  - name: wrong contract id
    given:
      - created: { template: "#invoices:Invoice:Invoice", contractId: "00a", createArgument: { amount: "1" } }
    expect:
      - rule: accept-small
        exercise: { contractId: "00b", choice: Accept }
  - name: expects nothing
    given:
      - created: { template: "#invoices:Invoice:Invoice", contractId: "00a", createArgument: { amount: "1" } }
    expect: []
  - name: expects a command that does not come
    given:
      - created: { template: "#invoices:Invoice:Invoice", createArgument: { amount: "5000" } }
    expect:
      - rule: accept-small
`);
    const result = runRuleTests(file, RULES);
    expect(result).toMatchObject({ passed: 0, failed: 3 });
    const [wrong, nothing, missing] = result.cases;
    expect(wrong!.failures).toEqual([
      [
        'expected command 1 from rule accept-small (line 11) was not produced',
        '  closest: rule accept-small, then[0] (- expected, + actual)',
        '  - exercise.contractId: "00b"',
        '  + exercise.contractId: "00a"',
      ],
    ]);
    expect(nothing!.failures[0]![0]).toBe('unexpected command from rule accept-small, then[0]');
    expect(nothing!.failures[0]).toContain('  why:');
    expect(nothing!.failures[0]!.some((l) => l.includes('fired (1 command)'))).toBe(true);
    expect(missing!.failures[0]).toEqual([
      'expected command 1 from rule accept-small (line 21) was not produced',
      '  no rule produced a command',
      '  why:',
      '    accept-small (rules.yaml:4:5): not fired',
      '      when[0] decimal(event.createArgument.amount) < decimal("1000") → false',
    ]);
    const text = formatRuleTestResult(result);
    expect(text).toContain('  ✗ wrong contract id\n      at t.test.yaml:7:5\n');
  });

  it('runs schedule slots over the given contracts', () => {
    const file = parse(`${HEAD}
  - name: nightly reminders
    slot: 2025-03-03T01:00:00Z
    contracts:
      - { template: "#invoices:Invoice:Invoice", contractId: "00late", createArgument: { due: "2025-03-02" } }
      - { template: "#invoices:Invoice:Invoice", contractId: "00fine", createArgument: { due: "2025-03-03" } }
      - { template: "#invoices:Invoice:Invoice", contractId: "00hidden", witnesses: [payer], createArgument: { due: "2020-01-01" } }
    expect:
      - rule: nightly
        exercise: { contractId: "00late", choice: Remind }
  - name: unknown schedule rule
    slot: 2025-03-03T01:00:00Z
    rule: nigthly
    expect: []
`);
    const result = runRuleTests(file, RULES);
    expect(result.cases[0]!.failures).toEqual([]);
    expect(result.cases[0]!.intents[0]!).toMatchObject({
      offset: 1,
      triggerKey: { kind: 'slot', slot: Date.parse('2025-03-03T01:00:00Z'), contractId: '00late' },
    });
    expect(
      result.cases[0]!.explanations.map((e) => [e.contractId, e.fired, e.mismatch?.reason]),
    ).toEqual([
      ['00late', true, undefined],
      ['00fine', false, undefined],
      ['00hidden', false, 'party-not-witness'],
    ]);
    expect(result.cases[1]!.failures).toEqual([
      ['no schedule rule "nigthly" in the loaded rules (did you mean "nightly"?)'],
    ]);
  });

  it('checks expected rule errors and fails on unexpected ones', () => {
    const file = parse(`${HEAD}
  - name: expected error
    given:
      - created: { template: "#invoices:Invoice:Invoice", createArgument: { amount: "lots" } }
    expect: []
    expectErrors:
      - { rule: accept-small, message: "is not a decimal number", code: CEL_EVALUATION_ERROR }
  - name: unexpected error
    given:
      - created: { template: "#invoices:Invoice:Invoice", createArgument: {} }
    expect: []
  - name: error that does not come
    given:
      - created: { template: "#invoices:Invoice:Invoice", createArgument: { amount: "1" } }
    expectErrors:
      - { rule: accept-small }
`);
    const [expected, unexpected, absent] = runRuleTests(file, RULES).cases;
    expect(expected!.failures).toEqual([]);
    expect(unexpected!.failures[0]![0]).toBe(
      'unexpected rule error (add `expectErrors:` if it is intended)',
    );
    expect(unexpected!.failures[0]![1]).toMatch(
      /^ {2}\+ rules.yaml:6:12: rule "accept-small": found no matching overload for 'decimal\(null\)' \(.*reads null/,
    );
    expect(absent!.failures).toEqual([
      [
        'expected an error from rule accept-small (line 21)',
        '  + rule accept-small raised no error',
      ],
    ]);
  });
});
