import { afterEach, describe, expect, it } from 'vitest';
import { eventIntent } from '../store/store-fixtures.js';
import { partsFixture, type PartsFixture } from './parts-fixture.js';

let f: PartsFixture | undefined;
afterEach(() => {
  f?.cleanup();
  f = undefined;
});

describe('Checkpoint', () => {
  it('is a low-watermark: it passes an offset only once its intents are terminal', () => {
    f = partsFixture();
    const { store, checkpoint } = f;
    store.batch(() => {
      store.recordIntents([eventIntent(5)]);
      checkpoint.advanceInBatch(5);
    });
    checkpoint.advance(8);
    expect(checkpoint.stored()).toBe(4);
    store.transition('lb-rule-5-0', { to: 'submitted', submissionId: 's' });
    store.transition('lb-rule-5-0', { to: 'succeeded' });
    expect(checkpoint.stored()).toBe(8);
  });

  it('holds at the earliest pause, and saves the last processed offset once released', () => {
    f = partsFixture();
    const { book, checkpoint } = f;
    const pause = { since: 0, offset: 6, resuming: false };
    book.pause('accept', pause);
    checkpoint.advance(9);
    expect(checkpoint.stored()).toBe(6);
    checkpoint.lastProcessed = 12;
    book.end('accept', pause);
    checkpoint.save();
    expect(checkpoint.stored()).toBe(12);
  });

  it('begins at the stored checkpoint, or at start: (stored at once); a reset is logged', () => {
    f = partsFixture();
    const { checkpoint, logger } = f;
    expect(checkpoint.begin({ kind: 'ledger-end' }, 20, false)).toBe(20);
    expect(checkpoint.stored()).toBe(20);
    expect(checkpoint.evaluatedThrough).toBe(20);
    expect(checkpoint.begin({ kind: 'begin' }, 30, false)).toBe(20);
    expect(logger.lines.some((l) => l.msg === 'checkpoint reset')).toBe(false);
    expect(checkpoint.begin({ kind: 'begin' }, 30, true)).toBe(0);
    expect(checkpoint.stored()).toBe(0);
    expect(logger.lines.find((l) => l.msg === 'checkpoint reset')?.fields).toMatchObject({
      previousCheckpoint: 20,
      startOffset: 0,
    });
  });

  it('a reset moves the positions too when asked (a pruning recovery)', () => {
    f = partsFixture();
    f.checkpoint.advance(3);
    f.checkpoint.reset(30, { positions: true });
    expect(f.checkpoint.stored()).toBe(30);
    expect(f.checkpoint.lastProcessed).toBe(30);
    expect(f.checkpoint.evaluatedThrough).toBe(30);
  });

  it('of a shadow bot follows the positions and writes nothing', () => {
    f = partsFixture({ writes: false });
    const { checkpoint } = f;
    expect(checkpoint.begin({ kind: 'ledger-end' }, 20, true)).toBe(20);
    checkpoint.advance(25);
    checkpoint.lastProcessed = 25;
    checkpoint.save();
    checkpoint.reset(30, { positions: true });
    expect(checkpoint.stored()).toBeUndefined();
    expect(checkpoint.lastProcessed).toBe(30);
  });

  it('save never throws: a closed store is logged; stored() is then undefined', () => {
    f = partsFixture();
    f.checkpoint.lastProcessed = 4;
    f.store.close();
    expect(() => f!.checkpoint.save()).not.toThrow();
    expect(
      f.logger.lines.find((l) => l.msg === 'cannot save the checkpoint')?.fields,
    ).toMatchObject({
      offset: 4,
    });
    expect(f.checkpoint.stored()).toBeUndefined();
  });
});
