/** The accept-small rule file the `ledgerbot test` command tests run their rule test files on. */
export const ACCEPT_SMALL_RULES = `version: 1
rules:
  - id: accept-small
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: 'decimal(event.createArgument.amount) < decimal("1000")'
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`;

/** A rule test file (its rules in ../rules) with one invoice of `amount` and what it expects. */
export function invoiceRuleTest(amount: string, expectText: string): string {
  return `rules: ../rules
parties: { payer: "Payer::1220aaaa" }
tests:
  - name: invoice of ${amount}
    given:
      - created: { template: "#invoices:Invoice:Invoice", contractId: "00a", createArgument: { amount: "${amount}" } }
    expect: ${expectText}
`;
}
