import { describe, expect, it } from 'vitest';
import { runCleanupSteps } from '../../src/runtime/cleanup-steps.js';
import { recordingLogger } from './bot-fixture.js';

describe('runCleanupSteps', () => {
  it('runs every step in order; one that throws or rejects is logged and the rest still run', async () => {
    const logger = recordingLogger();
    const ran: string[] = [];
    await runCleanupSteps(
      [
        { name: 'a', run: () => ran.push('a') },
        {
          name: 'b',
          run: () => {
            throw new Error('b broke');
          },
        },
        { name: 'c', run: () => Promise.reject(new Error('c broke')) },
        {
          name: 'd',
          run: async () => {
            await Promise.resolve();
            ran.push('d');
          },
        },
        { name: 'store', run: () => ran.push('store') },
      ],
      logger,
    );
    expect(ran).toEqual(['a', 'd', 'store']);
    expect(logger.lines.map((l) => [l.msg, l.fields.step, l.fields.error])).toEqual([
      ['cleanup step failed', 'b', 'b broke'],
      ['cleanup step failed', 'c', 'c broke'],
    ]);
  });

  it('runs synchronous steps without yielding, and waits for a promise before the next step', async () => {
    const ran: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const done = runCleanupSteps(
      [
        { name: 'x', run: () => ran.push('x') },
        { name: 'y', run: () => ran.push('y') },
        { name: 'wait', run: () => gate },
        { name: 'z', run: () => ran.push('z') },
      ],
      recordingLogger(),
    );
    expect(ran).toEqual(['x', 'y']);
    release();
    await done;
    expect(ran).toEqual(['x', 'y', 'z']);
  });
});
