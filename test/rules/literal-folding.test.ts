import { describe, expect, it } from 'vitest';
import { loadRules } from '../../src/rules/load-rules.js';
import { formatRuleProblem } from '../../src/rules/rule-problem.js';
import { PARTIES } from './rule-fixtures.js';

const rule = (when: string): string => `version: 1
rules:
  - id: r
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when:
      - event.createArgument.currency == "USD"
      - ${when}
    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }, actAs: [payer] }]
`;

const problems = (when: string): string[] =>
  loadRules([{ path: 'fold.yaml', text: rule(when) }], { parties: PARTIES }).problems.map(
    (p) => `${formatRuleProblem(p)} [${p.code}]`,
  );

describe('literal decimal, date and timestamp arguments', () => {
  it('are checked when the rules load, at the literal in the file', () => {
    expect(problems('decimal(event.createArgument.amount) < decimal("1,000")')).toEqual([
      'fold.yaml:7:56: CEL: "1,000" is not a decimal number [CEL_COMPILE_ERROR]',
    ]);
    expect(problems('date(event.createArgument.due) < date("2025-02-29")')).toEqual([
      'fold.yaml:7:47: CEL: "2025-02-29" is not a date: write yyyy-mm-dd [CEL_COMPILE_ERROR]',
    ]);
    expect(problems('now > timestamp("2025-01-31 09:00")')).toEqual([
      'fold.yaml:7:25: CEL: timestamp() requires a string in ISO 8601 format [CEL_COMPILE_ERROR]',
    ]);
  });

  it('load when they are valid', () => {
    expect(problems('decimal(event.createArgument.amount) < decimal("1000.5")')).toEqual([]);
    expect(problems('date(event.createArgument.due) < date("2025-02-28")')).toEqual([]);
    expect(problems('now > timestamp("2025-01-31T09:00:00Z")')).toEqual([]);
  });
});
