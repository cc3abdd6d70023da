import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { misplacedTemplates } from '../../src/rules/template-placement.js';

function misplaced(text: string): string[] {
  return misplacedTemplates(parseDocument(text).contents).map(({ path }) => path.join('.'));
}

describe('misplacedTemplates', () => {
  it('allows "${{ }}" in command values, workflowId and disclosedContracts only', () => {
    const text = `rules:
  - id: "\${{ no }}"
    when: "\${{ no }}"
    then:
      - exercise:
          template: "\${{ no }}"
          choice: "\${{ no }}"
          contractId: "\${{ yes }}"
          choiceArgument: { a: ["\${{ yes }}"] }
        actAs: ["\${{ no }}"]
        workflowId: "\${{ yes }}"
        disclosedContracts: "\${{ yes }}"
`;
    expect(misplaced(text)).toEqual([
      'rules.0.id',
      'rules.0.when',
      'rules.0.then.0.exercise.template',
      'rules.0.then.0.exercise.choice',
      'rules.0.then.0.actAs.0',
    ]);
  });

  it('finds nothing in a file without templates', () => {
    expect(misplaced('rules: [{id: a, when: "event.x > 1"}]\n')).toEqual([]);
  });
});
