import { describe, expect, it } from 'vitest';
import { loadRules } from '../../src/rules/load-rules.js';
import { formatRuleProblem } from '../../src/rules/rule-problem.js';

function problems(schedule: string): string[] {
  const text = `version: 1
rules:
  - id: s
    schedule: ${schedule}
    then:
      - create: { template: "#p:M:T", createArguments: {} }
        actAs: [a]
`;
  return loadRules([{ path: 's.yaml', text }], { parties: { a: 'A::1' } }).problems.map(
    formatRuleProblem,
  );
}

describe('schedule rules at load', () => {
  it('accept the six-field (seconds) form', () => {
    expect(problems('{ cron: "*/10 * * * * *", timezone: Europe/Zurich }')).toEqual([]);
  });

  it('reject a bad field of a six-field spec with file:line:col of that field', () => {
    const [problem] = problems('{ cron: "0 61 9 * * *" }');
    expect(problem).toMatch(
      /^s\.yaml:4:26: bad cron expression "0 61 9 \* \* \*": "61" is not a valid minute/,
    );
    expect(problems('{ cron: "0 0 0 9 * * *" }')[0]).toContain(
      'cron expression has 7 field(s), not 5 (or 6)',
    );
  });

  it('reject an unknown time zone with a suggestion', () => {
    expect(problems('{ cron: "0 9 * * *", timezone: America/New_Yrok }')[0]).toMatch(
      /^s\.yaml:4:46: unknown time zone "America\/New_Yrok"\n {4}hint: did you mean "America\/New_York"\?/,
    );
  });
});
