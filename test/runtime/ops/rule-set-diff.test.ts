import { describe, expect, it } from 'vitest';
import { loadRulesOrThrow } from '../../../src/rules/load-rules.js';
import { diffRuleSets, ruleContentHash } from '../../../src/runtime/rule-set-diff.js';

const PARTIES = { payer: 'Payer::1220', issuer: 'Issuer::1220' };

function rules(text: string, path = '/r/rules.yaml') {
  return loadRulesOrThrow([{ path, text }], { parties: PARTIES });
}

const rule = (id: string, when: string, revision = 1): string => `  - id: ${id}
    revision: ${revision}
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: '${when}'
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`;

describe('diffRuleSets', () => {
  it('reports added, removed and changed rules by id, revision and content hash', () => {
    const before = rules(
      `version: 1\nrules:\n${rule('a', 'true')}${rule('b', 'true')}${rule('c', 'true')}`,
    );
    const after = rules(
      `version: 1\nrules:\n${rule('a', 'true')}${rule('b', 'false')}${rule('d', 'true', 3)}`,
    );
    const diff = diffRuleSets(before, after);
    expect(diff.added.map((v) => `${v.id}@${v.revision}`)).toEqual(['d@3']);
    expect(diff.removed.map((v) => v.id)).toEqual(['c']);
    expect(diff.changed.map((v) => v.id)).toEqual(['b']);
    expect(diff.unchanged).toBe(1);
    expect(diff.changed[0]!.hash).toMatch(/^[0-9a-f]{12}$/);
    expect(diff.changed[0]!.hash).not.toBe(ruleContentHash(before.rules[1]!));
  });

  it('does not count moving a rule to another place or file as a change', () => {
    const a = rules(`version: 1\nrules:\n${rule('a', 'true')}`);
    const b = rules(`# moved\n\nversion: 1\nrules:\n${rule('a', 'true')}`, '/other/file.yaml');
    expect(ruleContentHash(a.rules[0]!)).toBe(ruleContentHash(b.rules[0]!));
    expect(diffRuleSets(a, b)).toEqual({ added: [], removed: [], changed: [], unchanged: 1 });
  });
});
