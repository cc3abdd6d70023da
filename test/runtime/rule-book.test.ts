import { describe, expect, it } from 'vitest';
import { RuleBook } from '../../src/runtime/rule-book.js';
import { ACCEPT_RULES, PARTIES, rules } from './bot-fixture.js';

const THREE = `${ACCEPT_RULES}  - id: remind
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Remind }
        actAs: [payer]
  - id: cancel
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Cancel }
        actAs: [payer]
`;

function ids(book: RuleBook, offset: number): string[] {
  return book.indexAt(offset).rules.map((r) => r.rule.id);
}

describe('RuleBook.indexAt: each rule from its own checkpoint', () => {
  it('leaves a rule out at and below its own checkpoint, and drops the floors once past them all', () => {
    const book = new RuleBook(rules(THREE), PARTIES);
    expect(book.indexAt(1)).toBe(book.index); // no floors: the live index itself
    book.setFloors(
      new Map([
        ['remind', 5],
        ['cancel', 8],
      ]),
    );
    expect(ids(book, 3)).toEqual(['accept']);
    expect(ids(book, 5)).toEqual(['accept']);
    expect(ids(book, 6)).toEqual(['accept', 'remind']);
    // One index per stretch between two floors, not one per event.
    expect(book.indexAt(7)).toBe(book.indexAt(6));
    expect(ids(book, 8)).toEqual(['accept', 'remind']);
    expect(book.floorOf('cancel')).toBe(8);
    expect(book.indexAt(9)).toBe(book.index);
    expect(ids(book, 9)).toEqual(['accept', 'remind', 'cancel']);
    // Dropped: an offset below a floor now (a resumed rule's replay has its own index) is not
    // filtered, and the rules' pauses are no longer raised to their floors.
    expect(book.indexAt(4)).toBe(book.index);
    expect(book.floorOf('cancel')).toBeUndefined();
  });

  it('filters the live index: a paused rule stays out below and above its floor', () => {
    const book = new RuleBook(rules(THREE), PARTIES);
    book.setFloors(new Map([['cancel', 8]]));
    book.pause('remind', { since: 0, offset: 2, resuming: false });
    expect(ids(book, 4)).toEqual(['accept']);
    expect(ids(book, 9)).toEqual(['accept', 'cancel']);
  });
});
