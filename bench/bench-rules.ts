/**
 * The rule sets of the ingest and memory sections: `count` rules over the invoices model (party
 * aliases `issuer` and `payer`), mixed as a real deployment would have them: created rules on
 * invoices with amount and currency thresholds, on payments and receipts, exercised rules on
 * Accept, Remind and Settle, archived rules on invoices, with createAndExercise, exercise and
 * create actions. Thresholds are spread so that some of the rules fire on some of the events.
 *
 * `acs-delta`: no exercised rules (they become created rules), so the bot subscribes with
 * TRANSACTION_SHAPE_ACS_DELTA; `ledger-effects` keeps them and the bot reads LEDGER_EFFECTS.
 */
export type RuleShape = 'ledger-effects' | 'acs-delta';

const CURRENCIES = ['USD', 'EUR', 'CHF'];
const HEX = '0123456789abcdef';

function rule(j: number, shape: RuleShape, prefix: string): string {
  const id = `${prefix}-${j}`;
  const kind = j % 10;
  const cur = CURRENCIES[j % 3]!;
  switch (shape === 'acs-delta' && (kind === 5 || kind === 6) ? kind - 5 : kind) {
    case 0:
    case 1:
      return `  - id: ${id}
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when:
      - event.createArgument.currency == "${cur}"
      - decimal(event.createArgument.amount) >= decimal("${(j * 97) % 2000}")
      - decimal(event.createArgument.amount) < decimal("${((j * 97) % 2000) + 20}")
    then:
      - createAndExercise:
          template: '#invoices:Automation:InvoiceAcceptor'
          createArguments: { payer: '\${{ parties.payer }}' }
          choice: AcceptInvoice
          choiceArgument: { invoice: '\${{ event.contractId }}' }
        actAs: [payer]
        workflowId: 'invoice-\${{ event.createArgument.reference }}'
`;
    case 2:
      return `  - id: ${id}
    on: { created: '#invoices:Invoice:Invoice', party: issuer }
    when: >-
      event.createArgument.reference.startsWith("INV-${Math.floor(j / 10)}") &&
      event.createArgument.currency == "CHF" &&
      decimal(event.createArgument.amount) >= decimal("${j * 5}")
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ event.contractId }}'
          choice: Remind
          choiceArgument: { note: 'Invoice \${{ event.createArgument.reference }} (\${{ event.createArgument.amount }}) is noted' }
        actAs: [issuer]
`;
    case 3:
      return `  - id: ${id}
    on: { created: '#invoices:Invoice:Invoice', party: issuer }
    when: date(event.createArgument.due) == date("2026-0${1 + (Math.floor(j / 10) % 9)}-1${j % 10}") && event.createArgument.currency in ["${cur}", "GBP"]
    then:
      - exerciseByKey:
          template: '#invoices:Invoice:Invoice'
          contractKey: { issuer: '\${{ parties.issuer }}', reference: '\${{ event.createArgument.reference }}' }
          choice: Remind
          choiceArgument: { note: null }
        actAs: [issuer]
`;
    case 4:
      return `  - id: ${id}
    on: { created: '#invoices:Payment:Payment', party: issuer }
    when: decimal(event.createArgument.amount) > decimal("${j * 20}") && decimal(event.createArgument.amount) < decimal("${j * 20 + 100}") && event.createArgument.currency == "${cur}"
    then:
      - exercise:
          template: '#invoices:Payment:Payment'
          contractId: '\${{ event.contractId }}'
          choice: Settle
        actAs: [issuer]
`;
    case 5:
      return `  - id: ${id}
    on:
      exercised: { template: '#invoices:Invoice:Invoice', choice: Accept, consuming: true }
      party: issuer
    when: event.exerciseResult.endsWith("${HEX[Math.floor(j / 10) % 16]}") && event.actingParties.size() > 0
    then:
      - exercise:
          template: '#invoices:Payment:Payment'
          contractId: '\${{ event.exerciseResult }}'
          choice: Settle
        actAs: [issuer]
`;
    case 6:
      return `  - id: ${id}
    on:
      exercised: { template: '#invoices:Invoice:Invoice', choice: Remind }
      party: payer
    when: event.choiceArgument.note != null && event.choiceArgument.note.endsWith("${j}")
    then:
      - create:
          template: '#invoices:Payment:Receipt'
          createArguments:
            payer: '\${{ parties.payer }}'
            payee: '\${{ parties.issuer }}'
            amount: '0.00'
            currency: '${cur}'
            reference: 'ack-\${{ event.contractId }}'
        actAs: [payer]
`;
    case 7:
      return `  - id: ${id}
    on: { archived: '#invoices:Invoice:Invoice', party: issuer }
    when: event.witnessParties.exists(p, p == parties.issuer) && event.contractId.endsWith("${HEX[Math.floor(j / 10) % 16]}")
    then:
      - create:
          template: '#invoices:Payment:Receipt'
          createArguments:
            payer: '\${{ parties.payer }}'
            payee: '\${{ parties.issuer }}'
            amount: '0.00'
            currency: USD
            reference: 'closed-\${{ event.contractId }}'
        actAs: [issuer]
`;
    case 8:
      return `  - id: ${id}
    on: { created: '#invoices:Payment:Receipt', party: payer }
    when: event.createArgument.reference.matches("^INV-[0-9]*${Math.floor(j / 10)}7$")
    then:
      - exercise:
          template: '#invoices:Payment:Receipt'
          contractId: '\${{ event.contractId }}'
          choice: Archive
        actAs: [payer]
`;
    default:
      return `  - id: ${id}
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: event.createArgument.payer == parties.payer && decimal(event.createArgument.amount) * 2 > decimal("${3800 + j}")
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ event.contractId }}'
          choice: Accept
        actAs: [payer]
`;
  }
}

/**
 * `count` rules numbered from `first`: the number picks the rule's kind, currency and thresholds,
 * so files numbered 0, 100, 200, … hold the same mix with other conditions (the start-up section's
 * ten files are not ten copies of one: a load compiles each distinct expression text only once).
 */
export function benchRules(count: number, shape: RuleShape, idPrefix = 'bench', first = 0): string {
  const rules = Array.from({ length: count }, (_, i) => rule(first + i, shape, idPrefix));
  return `version: 1\nrules:\n${rules.join('')}`;
}

/**
 * The memory section's rules: twelve rules that the invoice events trigger, of which one fires
 * (USD invoices whose reference ends in 7: about 1 in 16 invoice creations, ~1.5% of the recorded
 * events); the others match their trigger and fail their condition. No rate limit in the way.
 */
export function memoryRules(): string {
  const idle = Array.from(
    { length: 10 },
    (_, j) => `  - id: watch-${j}
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: event.createArgument.currency == "JPY" && decimal(event.createArgument.amount) > decimal("${j}")
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ event.contractId }}'
          choice: Accept
        actAs: [payer]
`,
  );
  return `version: 1
rules:
${idle.join('')}  - id: accept-sevens
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when:
      - event.createArgument.currency == "USD"
      - event.createArgument.reference.endsWith("7")
    then:
      - createAndExercise:
          template: '#invoices:Automation:InvoiceAcceptor'
          createArguments: { payer: '\${{ parties.payer }}' }
          choice: AcceptInvoice
          choiceArgument: { invoice: '\${{ event.contractId }}' }
        actAs: [payer]
    concurrency: 64
    rateLimit: { perSecond: 1000000, burst: 1000000 }
  - id: settle-accepted
    on:
      exercised: { template: '#invoices:Invoice:Invoice', choice: Accept, consuming: true }
      party: issuer
    when: event.actingParties.size() > 5
    then:
      - exercise:
          template: '#invoices:Payment:Payment'
          contractId: '\${{ event.exerciseResult }}'
          choice: Settle
        actAs: [issuer]
`;
}
