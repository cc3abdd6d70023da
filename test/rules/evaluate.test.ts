import { describe, expect, it } from 'vitest';
import { evaluate, evaluateTransaction } from '../../src/rules/evaluate.js';
import type { Intent } from '../../src/rules/evaluation-result.js';
import { formatRuleEvaluationError } from '../../src/rules/evaluation-result.js';
import { indexRules } from '../../src/rules/rule-index.js';
import type { JsTransaction } from '../../src/ledger/wire/wire-types.js';
import { specValidator } from '../support/spec-validator.js';
import {
  CONTEXT,
  PARTIES,
  PKG_V1,
  PKG_V2,
  archived,
  created,
  exercised,
  input,
  rules,
  tx,
} from './rule-fixtures.js';

const spec = specValidator('openapi-3.5');

/** Every intent must become a valid submission: the command and the whole JsCommands body. */
function assertWire(intents: readonly Intent[]): void {
  for (const intent of intents) {
    spec.assert('Command', intent.command);
    spec.assert('JsCommands', {
      commands: [intent.command],
      commandId: intent.commandId,
      actAs: intent.actAs,
      readAs: intent.readAs,
      workflowId: intent.workflowId,
      disclosedContracts: intent.disclosedContracts,
      submissionId: '6f1d2b0e-0000-4000-8000-000000000000',
      deduplicationPeriod: { DeduplicationOffset: { value: intent.offset } },
    });
  }
}

const ACCEPT = `
version: 1
rules:
  - id: accept-small-invoices
    description: The payer accepts invoices under 1000 USD
    labels: { team: billing }
    on:
      created: "#invoices:Invoice:Invoice"
      party: payer
    when:
      - 'event.createArgument.currency == "USD"'
      - 'decimal(event.createArgument.amount) < decimal("1000")'
    then:
      - createAndExercise:
          template: "#invoices:Automation:InvoiceAcceptor"
          createArguments: { payer: "\${{ parties.payer }}" }
          choice: AcceptInvoice
          choiceArgument: { invoice: "\${{ event.contractId }}" }
        actAs: [payer]
`;

describe('evaluate: created rules', () => {
  it('fires with a rendered, spec-valid command and everything a submission needs', () => {
    const set = rules(ACCEPT);
    const event = created();
    const r = evaluate(set, input({ CreatedEvent: event }, { offset: 42 }), CONTEXT);
    expect(r.errors).toEqual([]);
    expect(r.intents).toHaveLength(1);
    const intent = r.intents[0]!;
    expect(intent.command).toEqual({
      CreateAndExerciseCommand: {
        templateId: '#invoices:Automation:InvoiceAcceptor',
        createArguments: { payer: PARTIES.payer },
        choice: 'AcceptInvoice',
        choiceArgument: { invoice: event.contractId },
      },
    });
    expect(intent).toMatchObject({
      ruleId: 'accept-small-invoices',
      revision: 1,
      actionIndex: 0,
      actAs: [PARTIES.payer],
      readAs: [],
      workflowId: 'accept-small-invoices',
      disclosedContracts: [],
      triggerKey: { kind: 'event', updateId: tx().updateId, nodeId: 0 },
      offset: 42,
      options: { concurrency: 4, retry: { maxAttempts: 10 }, rateLimit: { perSecond: 10 } },
    });
    expect(intent.commandId).toMatch(/^lb-accept-small-invoices-[0-9a-f]{32}$/);
    assertWire(r.intents);
  });

  it('compares Numeric strings as decimals, not as text or doubles', () => {
    const set = rules(ACCEPT);
    const fire = (amount: string): boolean =>
      evaluate(
        set,
        input({ CreatedEvent: created({ createArgument: { amount, currency: 'USD' } }) }),
        CONTEXT,
      ).intents.length === 1;
    expect(fire('999.9999999999')).toBe(true);
    expect(fire('1000.0000000000')).toBe(false);
    // As text "9" > "1000"; as a decimal it is smaller.
    expect(fire('9')).toBe(true);
    expect(fire('10000')).toBe(false);
  });

  it('explains each condition: true, false, and skipped after a false one', () => {
    const set = rules(ACCEPT);
    const r = evaluate(
      set,
      input({ CreatedEvent: created({ createArgument: { amount: '5', currency: 'EUR' } }) }),
      CONTEXT,
    );
    expect(r.intents).toEqual([]);
    expect(r.explanations).toHaveLength(1);
    const e = r.explanations[0]!;
    expect(e).toMatchObject({
      ruleId: 'accept-small-invoices',
      triggerMatched: true,
      mismatch: null,
      fired: false,
      intents: 0,
      error: null,
    });
    expect(e.conditions.map((c) => c.outcome)).toEqual(['false', 'skipped']);
    expect(e.conditions[0]).toMatchObject({
      index: 0,
      source: 'event.createArgument.currency == "USD"',
      pos: { file: 'rules.yaml', line: 11 },
    });
    const ok = evaluate(set, input({ CreatedEvent: created() }), CONTEXT).explanations[0]!;
    expect(ok.conditions.map((c) => c.outcome)).toEqual(['true', 'true']);
    expect(ok.fired).toBe(true);
  });
});

describe('evaluate: ${{ }} templates', () => {
  const set = rules(`
version: 1
rules:
  - id: typed
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments:
            whole_int: "\${{ 40 + 2 }}"
            whole_list: "\${{ [event.createArgument.reference, 'x'] }}"
            whole_bool: "\${{ event.createArgument.currency == 'USD' }}"
            whole_decimal: "\${{ decimal(event.createArgument.amount) * 2 }}"
            whole_map: "\${{ {'ref': event.createArgument.reference} }}"
            whole_time: "\${{ event.recordTime }}"
            whole_null: "\${{ event.contractKey }}"
            text: "Invoice \${{ event.createArgument.reference }} for \${{ event.createArgument.amount }} at offset \${{ event.offset }}"
            text_decimal: "total=\${{ decimal(event.createArgument.amount) + 1 }}"
            literal: { nested: [1, "two", true] }
        actAs: [payer]
        workflowId: "invoice-\${{ event.createArgument.reference }}"
`);

  it('keeps the type of whole-value templates and interpolates inside text', () => {
    const r = evaluate(set, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.errors).toEqual([]);
    const cmd = r.intents[0]!.command as { CreateCommand: { createArguments: unknown } };
    expect(cmd.CreateCommand.createArguments).toEqual({
      whole_int: '42',
      whole_list: ['INV-1', 'x'],
      whole_bool: true,
      whole_decimal: '1999.98',
      whole_map: { ref: 'INV-1' },
      whole_time: '2025-03-03T08:00:00.123Z',
      whole_null: null,
      text: 'Invoice INV-1 for 999.99 at offset 42',
      text_decimal: 'total=1000.99',
      literal: { nested: ['1', 'two', true] },
    });
    expect(r.intents[0]!.workflowId).toBe('invoice-INV-1');
    assertWire(r.intents);
  });

  it('reports a list spliced into text as a rule error at the expression', () => {
    const bad = rules(`
version: 1
rules:
  - id: bad-interp
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments: { note: "parties: \${{ event.signatories }}" }
        actAs: [payer]
`);
    const r = evaluate(bad, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.intents).toEqual([]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({
      ruleId: 'bad-interp',
      code: 'CEL_EVALUATION_ERROR',
      phase: 'then',
      actionIndex: 0,
      expression: 'event.signatories',
      pos: { file: 'rules.yaml', line: 9 },
    });
    expect(r.errors[0]!.message).toMatch(/cannot put a list inside a text/);
  });

  it('refuses values a command cannot carry, naming the expression', () => {
    const bad = rules(`
version: 1
rules:
  - id: duration-arg
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments: { wait: "\${{ duration('1h') }}" }
        actAs: [payer]
`);
    const r = evaluate(bad, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.intents).toEqual([]);
    expect(r.errors[0]).toMatchObject({ code: 'CEL_EVALUATION_ERROR', phase: 'then' });
    expect(r.errors[0]!.message).toMatch(/gives a duration, which a command cannot carry/);
  });

  it('rejects a contract id that is not text, and emits no partial set of actions', () => {
    const bad = rules(`
version: 1
rules:
  - id: two-actions
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ event.contractId }}"
          choice: Accept
        actAs: [payer]
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ event.nodeId }}"
          choice: Accept
        actAs: [payer]
`);
    const r = evaluate(bad, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.intents).toEqual([]);
    expect(r.errors[0]).toMatchObject({ code: 'BAD_VALUE', actionIndex: 1, phase: 'then' });
    expect(r.errors[0]!.message).toMatch(/contractId must be non-empty text, got the number 0/);
    expect(r.explanations[0]).toMatchObject({ fired: false, intents: 0 });
  });
});

describe('evaluate: exercised and archived rules', () => {
  const set = rules(`
version: 1
rules:
  - id: on-remind
    on:
      exercised: { template: "#invoices:Invoice:Invoice", choice: Remind, consuming: false }
      party: payer
    when: 'event.exerciseResult.startsWith("Please") && event.actingParties[0] == parties.issuer'
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ event.contractId }}"
          choice: Accept
        actAs: [payer]
  - id: on-accept-any
    on:
      exercised: { template: "#invoices:Invoice:Invoice", choice: Accept }
      party: issuer
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments: { what: "accepted \${{ event.contractId }}", node: "\${{ event.nodeId + 1 }}" }
        actAs: [issuer]
  - id: on-archive
    on: { archived: "#invoices:Invoice:Invoice", party: issuer }
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments: { gone: "\${{ event.contractId }}" }
        actAs: [issuer]
`);

  it('matches the choice and the consuming flag, and explains a different choice', () => {
    const remind = evaluate(set, input({ ExercisedEvent: exercised() }), CONTEXT);
    expect(remind.errors).toEqual([]);
    expect(remind.intents.map((i) => i.ruleId)).toEqual(['on-remind']);
    expect(remind.explanations.map((e) => [e.ruleId, e.mismatch?.reason ?? 'matched'])).toEqual([
      ['on-remind', 'matched'],
      ['on-accept-any', 'other-choice'],
    ]);
    assertWire(remind.intents);

    const consumingRemind = evaluate(
      set,
      input({ ExercisedEvent: exercised({ consuming: true }) }),
      CONTEXT,
    );
    const byRule = new Map(consumingRemind.explanations.map((e) => [e.ruleId, e]));
    expect(byRule.get('on-remind')!.mismatch).toMatchObject({ reason: 'other-consuming' });
    expect(byRule.get('on-remind')!.mismatch!.message).toMatch(
      /the exercise is consuming, the rule wants non-consuming ones/,
    );
  });

  it('fires archived rules on ArchivedEvents and on consuming exercises, with the same commandId', () => {
    const acsDelta = evaluate(
      set,
      input({ ArchivedEvent: archived({ nodeId: 3, witnessParties: [PARTIES.issuer] }) }),
      CONTEXT,
    );
    expect(acsDelta.intents.map((i) => i.ruleId)).toEqual(['on-archive']);

    const ledgerEffects = evaluate(
      set,
      input({
        ExercisedEvent: exercised({
          nodeId: 3,
          choice: 'Accept',
          consuming: true,
          actingParties: [PARTIES.payer],
          witnessParties: [PARTIES.issuer, PARTIES.payer],
        }),
      }),
      CONTEXT,
    );
    expect(ledgerEffects.errors).toEqual([]);
    expect(ledgerEffects.intents.map((i) => i.ruleId)).toEqual(['on-accept-any', 'on-archive']);
    const archiveIntent = ledgerEffects.intents[1]!;
    expect(archiveIntent.commandId).toBe(acsDelta.intents[0]!.commandId);
    const audit = ledgerEffects.intents[0]!.command as {
      CreateCommand: { createArguments: Record<string, unknown> };
    };
    expect(audit.CreateCommand.createArguments.node).toBe('4');
    assertWire(ledgerEffects.intents);
  });

  it('does not fire archived rules on non-consuming exercises', () => {
    const r = evaluate(
      set,
      input({ ExercisedEvent: exercised({ witnessParties: [PARTIES.issuer] }) }),
      CONTEXT,
    );
    expect(r.explanations.map((e) => e.ruleId)).not.toContain('on-archive');
  });
});

describe('evaluate: party and package matching', () => {
  it('fires only when the rule party is a witness of the event', () => {
    const set = rules(ACCEPT);
    const r = evaluate(
      set,
      input({ CreatedEvent: created({ witnessParties: [PARTIES.issuer] }) }),
      CONTEXT,
    );
    expect(r.intents).toEqual([]);
    expect(r.explanations[0]!.mismatch).toEqual({
      reason: 'party-not-witness',
      message: `payer (${PARTIES.payer}) does not see this event; its witnesses are ${PARTIES.issuer}`,
    });
  });

  it('explains a party alias the runtime config lacks', () => {
    const set = rules(ACCEPT);
    const r = evaluate(set, input({ CreatedEvent: created() }), {
      ...CONTEXT,
      parties: { issuer: PARTIES.issuer },
    });
    expect(r.explanations[0]!.mismatch?.reason).toBe('unknown-party');
  });

  it('matches package-name references by packageName in any package version', () => {
    const set = rules(ACCEPT);
    const v2 = created({
      templateId: `${PKG_V2}:Invoice:Invoice`,
      representativePackageId: PKG_V2,
    });
    expect(evaluate(set, input({ CreatedEvent: v2 }), CONTEXT).intents).toHaveLength(1);
    const otherPackage = created({ packageName: 'other-invoices' });
    const r = evaluate(set, input({ CreatedEvent: otherPackage }), CONTEXT);
    expect(r.intents).toEqual([]);
    expect(r.explanations[0]!.mismatch?.reason).toBe('other-package');
    expect(r.explanations[0]!.mismatch?.message).toMatch(/"other-invoices".*"invoices"/);
  });

  it('matches package-id references by package id', () => {
    const { ruleSet } = loadPinned();
    expect(evaluate(ruleSet, input({ CreatedEvent: created() }), CONTEXT).intents).toHaveLength(1);
    const v2 = created({ templateId: `${PKG_V2}:Invoice:Invoice` });
    const r = evaluate(ruleSet, input({ CreatedEvent: v2 }), CONTEXT);
    expect(r.intents).toEqual([]);
    expect(r.explanations[0]!.mismatch?.reason).toBe('other-package');
  });

  function loadPinned(): { ruleSet: ReturnType<typeof rules> } {
    return {
      ruleSet: rules(`
version: 1
rules:
  - id: pinned
    on: { created: "${PKG_V1}:Invoice:Invoice", party: payer }
    then:
      - exercise: { template: "${PKG_V1}:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`),
    };
  }
});

describe('evaluate: rule errors', () => {
  const set = rules(`
version: 1
rules:
  - id: missing-field
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: 'event.createArgument.discount > 0'
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
  - id: divide-by-zero
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: 'decimal(event.createArgument.amount) / decimal("0") > decimal("1")'
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
  - id: not-boolean
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: 'event.createArgument.amount'
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
  - id: healthy
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`);

  it('reports each failing rule with file:line:col and still runs the others', () => {
    const r = evaluate(set, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.intents.map((i) => i.ruleId)).toEqual(['healthy']);
    expect(r.errors.map((e) => [e.ruleId, e.code, e.phase])).toEqual([
      ['missing-field', 'CEL_EVALUATION_ERROR', 'when'],
      ['divide-by-zero', 'CEL_EVALUATION_ERROR', 'when'],
      ['not-boolean', 'NOT_A_BOOLEAN', 'when'],
    ]);
    // The template is unknown here, so the missing field reads null (a misspelt one too).
    expect(r.errors[0]!.message).toMatch(/dyn<null> > int.*reads null/);
    expect(r.errors[1]!.message).toMatch(/division by zero/);
    expect(r.errors[2]!.message).toMatch(/gave the text "999.99"/);
    expect(formatRuleEvaluationError(r.errors[0]!)).toBe(
      `rules.yaml:6:12: rule "missing-field": ${r.errors[0]!.message} in "event.createArgument.discount > 0"`,
    );
    const explained = r.explanations.find((e) => e.ruleId === 'missing-field')!;
    expect(explained.conditions.map((c) => c.outcome)).toEqual(['error']);
    expect(explained.error).toBe(r.errors[0]);
  });

  it('keeps working on hostile expressions, in bounded time', () => {
    const hostile = rules(`
version: 1
rules:
  - id: reach-out
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: 'dyn(event).constructor == null || dyn(event)["__proto__"] == null'
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
  - id: quadratic
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: 'event.createArgument.lines.all(a, event.createArgument.lines.exists(b, a + b < 0))'
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`);
    const lines = Array.from({ length: 1500 }, (_, i) => i);
    const started = performance.now();
    const r = evaluate(
      hostile,
      input({ CreatedEvent: created({ createArgument: { lines } }) }),
      CONTEXT,
    );
    expect(performance.now() - started).toBeLessThan(5000);
    expect(r.intents).toEqual([]);
    expect(r.errors.map((e) => e.ruleId)).toEqual(['reach-out']);
    expect(r.errors[0]!.message).toMatch(/No such key: (constructor|__proto__)/);
    expect(r.explanations.find((e) => e.ruleId === 'quadratic')!.conditions[0]!.outcome).toBe(
      'false',
    );
  });
});

describe('evaluate: the index', () => {
  const text = `
version: 1
rules:
  - id: on-invoice
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
  - id: on-payment
    on: { created: "#invoices:Payment:Payment", party: payer }
    when: 'event.createArgument.amount.missing.field'
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: {} }
        actAs: [payer]
  - id: disabled
    enabled: false
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: {} }
        actAs: [payer]
  - id: weekly
    schedule: { cron: "0 9 * * MON" }
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: {} }
        actAs: [issuer]
`;

  it('considers only the rules on the event template (and explains disabled ones)', () => {
    const index = indexRules(rules(text));
    const r = evaluate(index, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.explanations.map((e) => e.ruleId)).toEqual(['on-invoice', 'disabled']);
    expect(r.explanations[1]!.mismatch?.reason).toBe('rule-disabled');
    expect(r.intents.map((i) => i.ruleId)).toEqual(['on-invoice']);
    // The payment rule would fail on this event; it is never evaluated.
    expect(r.errors).toEqual([]);
  });

  it('explains every rule on request, with the reason for the others', () => {
    const index = indexRules(rules(text));
    const r = evaluate(index, input({ CreatedEvent: created() }), CONTEXT, { explain: 'all' });
    expect(r.explanations.map((e) => [e.ruleId, e.mismatch?.reason ?? 'matched'])).toEqual([
      ['on-invoice', 'matched'],
      ['on-payment', 'other-template'],
      ['disabled', 'rule-disabled'],
      ['weekly', 'other-event-kind'],
    ]);
    expect(r.intents.map((i) => i.ruleId)).toEqual(['on-invoice']);
  });

  it('returns nothing for an event no rule watches', () => {
    const r = evaluate(
      rules(text),
      input({ CreatedEvent: created({ templateId: `${PKG_V1}:Other:Thing` }) }),
      CONTEXT,
    );
    expect(r).toEqual({ intents: [], explanations: [], errors: [] });
  });

  it('is cached per rule set', () => {
    const set = rules(text);
    expect(indexRules(set)).toBe(indexRules(set));
  });
});

describe('evaluate: CEL variables', () => {
  it('gives event (with transaction fields), parties, rule, now and today', () => {
    const set = rules(`
version: 1
rules:
  - id: variables
    revision: 3
    description: checks every variable
    labels: { team: billing }
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when:
      - 'event.updateId.startsWith("1220") && event.offset == 42 && event.nodeId + 1 == 1'
      - 'event.recordTime < now && event.effectiveAt == event.recordTime && event.workflowId == "wf-7"'
      - 'now - event.createdAt > duration("1h") && today == date("2025-03-03")'
      - 'parties.payer == "${PARTIES.payer}" && rule.id == "variables" && rule.revision == 3'
      - 'rule.labels.team == "billing" && rule.description == "checks every variable"'
      - 'date(event.createArgument.due) < today'
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: {} }
        actAs: [payer]
`);
    const r = evaluate(set, input({ CreatedEvent: created() }, { workflowId: 'wf-7' }), {
      parties: PARTIES,
      now: new Date('2025-03-03T09:30:00Z'),
    });
    expect(r.errors).toEqual([]);
    expect(r.explanations[0]!.conditions.map((c) => c.outcome)).toEqual([
      'true',
      'true',
      'true',
      'true',
      'true',
      'true',
    ]);
    expect(r.intents).toHaveLength(1);
  });

  it('evaluates a whole transaction event by event', () => {
    const set = rules(ACCEPT);
    const transaction: JsTransaction = {
      ...tx(),
      commandId: '',
      synchronizerId: 'da::1220',
      events: [
        { CreatedEvent: created({ nodeId: 0 }) },
        { CreatedEvent: created({ nodeId: 1, contractId: '00' + 'd'.repeat(64) }) },
      ],
    };
    spec.assert('JsTransaction', transaction);
    const r = evaluateTransaction(set, transaction, CONTEXT);
    expect(r.intents.map((i) => i.triggerKey)).toEqual([
      { kind: 'event', updateId: transaction.updateId, nodeId: 0 },
      { kind: 'event', updateId: transaction.updateId, nodeId: 1 },
    ]);
    expect(new Set(r.intents.map((i) => i.commandId)).size).toBe(2);
  });
});

describe('evaluate: actions', () => {
  it('renders readAs, workflowId and disclosedContracts into a valid submission', () => {
    const set = rules(`
version: 1
rules:
  - id: disclose
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exerciseByKey:
          template: "#invoices:Invoice:Invoice"
          contractKey: { issuer: "\${{ event.signatories[0] }}", reference: "\${{ event.createArgument.reference }}" }
          choice: Accept
        actAs: [payer]
        readAs: [auditor, issuer]
        workflowId: settle
        disclosedContracts:
          - contractId: "\${{ event.contractId }}"
            createdEventBlob: "CgMxLjEStwQKRQBbHk"
            templateId: "${PKG_V1}:Invoice:Invoice"
`);
    const r = evaluate(set, input({ CreatedEvent: created() }), CONTEXT);
    expect(r.errors).toEqual([]);
    const intent = r.intents[0]!;
    expect(intent.command).toEqual({
      ExerciseByKeyCommand: {
        templateId: '#invoices:Invoice:Invoice',
        contractKey: { issuer: PARTIES.issuer, reference: 'INV-1' },
        choice: 'Accept',
        choiceArgument: {},
      },
    });
    expect(intent.readAs).toEqual([PARTIES.auditor, PARTIES.issuer]);
    expect(intent.workflowId).toBe('settle');
    expect(intent.disclosedContracts).toEqual([
      {
        contractId: created().contractId,
        createdEventBlob: 'CgMxLjEStwQKRQBbHk',
        templateId: `${PKG_V1}:Invoice:Invoice`,
      },
    ]);
    assertWire(r.intents);
  });

  it('reports an actAs alias the runtime config lacks as a rule error', () => {
    const set = rules(`
version: 1
rules:
  - id: as-issuer
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - create: { template: "#invoices:Audit:Entry", createArguments: {} }
        actAs: [issuer]
`);
    const r = evaluate(set, input({ CreatedEvent: created() }), {
      ...CONTEXT,
      parties: { payer: PARTIES.payer },
    });
    expect(r.intents).toEqual([]);
    expect(r.errors[0]).toMatchObject({ code: 'UNKNOWN_PARTY', phase: 'then', actionIndex: 0 });
    expect(r.errors[0]!.message).toMatch(/alias "issuer"/);
  });
});
