import { describe, expect, it } from 'vitest';
import { loadRules } from '../../src/rules/load-rules.js';
import { eventFields } from '../../src/rules/event-fields.js';

const ACTION = `    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Remind }
        actAs: [issuer]
`;

function problemsOf(
  on: string,
  when: string,
  extra = '',
): ReturnType<typeof loadRules>['problems'] {
  const text = `version: 1
rules:
  - id: r
    on: ${on}
    when: '${when}'
${ACTION}${extra}`;
  return loadRules([{ path: 'r.yaml', text }], { parties: ['payer', 'issuer'] }).problems;
}

const EXERCISED = `{ exercised: { template: '#invoices:Invoice:Invoice', choice: Accept }, party: issuer }`;
const CREATED = `{ created: '#invoices:Invoice:Invoice', party: issuer }`;
const ARCHIVED = `{ archived: '#invoices:Invoice:Invoice', party: issuer }`;

describe('the fields of `event` depend on the trigger kind', () => {
  it('an exercised rule reading createArgument is an error at its line and column, with the fields it has', () => {
    const problems = problemsOf(
      EXERCISED,
      'decimal(event.createArgument.amount) >= decimal("1000")',
    );
    expect(problems).toHaveLength(1);
    const p = problems[0]!;
    // `    when: '` is 11 characters; `decimal(event.` 14 more.
    expect([p.line, p.col, p.code, p.severity]).toEqual([5, 26, 'UNKNOWN_EVENT_FIELD', 'error']);
    expect(p.message).toBe('an exercised event has no field "createArgument"');
    expect(p.hint).toContain('did you mean "choiceArgument"?');
    expect(p.hint).toContain('"createArgument" is a field of created events');
    expect(p.hint).toContain(`An exercised event has: ${eventFields('exercised').join(', ')}`);
  });

  it('a created rule reading choiceArgument or exerciseResult is an error; its own fields are fine', () => {
    expect(
      problemsOf(CREATED, 'event.choiceArgument.x == 1 || size(event.exerciseResult) > 0').map(
        (p) => [p.col, p.code, p.message],
      ),
    ).toEqual([
      [18, 'UNKNOWN_EVENT_FIELD', 'a created event has no field "choiceArgument"'],
      [54, 'UNKNOWN_EVENT_FIELD', 'a created event has no field "exerciseResult"'],
    ]);
    expect(
      problemsOf(
        CREATED,
        'event.createArgument.amount != "" && event.signatories.size() > 0 && event.updateId != "" && event.recordTime < now && has(event.contractKey)',
      ),
    ).toEqual([]);
  });

  it('an archived rule may read only what an ArchivedEvent has', () => {
    const problems = problemsOf(ARCHIVED, 'event.choice == "Archive"');
    expect(problems.map((p) => [p.code, p.message])).toEqual([
      ['UNKNOWN_EVENT_FIELD', 'an archived event has no field "choice"'],
    ]);
    expect(problems[0]!.hint).toContain('An archive may come as an ArchivedEvent');
    expect(
      problemsOf(ARCHIVED, 'event.contractId != "" && event.witnessParties.size() > 0'),
    ).toEqual([]);
  });

  it('an exercised rule reads its own fields, in comprehensions and cel.bind too', () => {
    expect(
      problemsOf(
        EXERCISED,
        'event.actingParties.exists(p, p == parties.issuer) && event.consuming && event.choiceArgument != null',
      ),
    ).toEqual([]);
    // A misspelt field of the event itself, anywhere in the expression.
    expect(
      problemsOf(EXERCISED, 'cel.bind(e, event, e.choic == "Accept")').map((p) => p.message),
    ).toEqual(['an exercised event has no field "choic"']);
  });

  it('checks command values and schedule `contract` too', () => {
    const text = `version: 1
rules:
  - id: s
    schedule: { cron: '0 9 * * *' }
    forEach: { activeContracts: '#invoices:Invoice:Invoice', party: issuer }
    when: contract.createArgument.due != "" && contract.choiceArgument == null
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ contract.contractId }}', choice: Remind, choiceArgument: { note: '\${{ contract.recordTime }}' } }
        actAs: [issuer]
`;
    const { problems } = loadRules([{ path: 's.yaml', text }], { parties: ['issuer'] });
    expect(problems.map((p) => [p.line, p.code, p.message])).toEqual([
      [6, 'UNKNOWN_EVENT_FIELD', 'an active contract has no field "choiceArgument"'],
      [8, 'UNKNOWN_EVENT_FIELD', 'an active contract has no field "recordTime"'],
    ]);
  });
});
