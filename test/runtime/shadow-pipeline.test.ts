import { afterEach, describe, expect, it } from 'vitest';
import type { Intent } from '../../src/rules/evaluation-result.js';
import { ShadowPipeline } from '../../src/runtime/shadow-pipeline.js';
import { invoiceCreated } from './bot-fixture.js';
import { evaluated, partsFixture, type PartsFixture } from './parts-fixture.js';

let f: PartsFixture | undefined;
afterEach(() => {
  f?.cleanup();
  f = undefined;
});

describe('ShadowPipeline', () => {
  it('logs, counts and emits each intent, and writes nothing', async () => {
    f = partsFixture({ writes: false });
    const p = new ShadowPipeline({ metrics: f.metrics, logger: f.logger, events: f.events });
    const shadowed: Intent[] = [];
    f.events.on('shadow-intent', (i) => shadowed.push(i));
    const evaluation = evaluated(f, invoiceCreated(11));
    expect(await p.submitEvent(evaluation)).toEqual({ inserted: 0, existing: 0 });
    await p.submitIntents(evaluation.intents);
    expect(shadowed.map((i) => i.commandId)).toEqual([
      evaluation.intents[0]!.commandId,
      evaluation.intents[0]!.commandId,
    ]);
    expect(f.metrics.shadowIntents).toBe(2);
    const lines = f.logger.lines.filter((l) => l.msg === 'shadow: would submit');
    expect(lines[0]?.fields).toMatchObject({
      ruleId: 'accept',
      offset: 11,
      updateId: 'upd-11',
      shadow: true,
      command: { ExerciseCommand: { contractId: '00inv11', choice: 'Accept' } },
    });
    expect(lines[1]?.fields.updateId).toBeUndefined();
    expect(f.store.listIntents()).toEqual([]);
    expect(f.store.checkpoint()).toBeUndefined();
  });

  it('has no open intents to resume and refuses dead-letter retries (SHADOW)', async () => {
    f = partsFixture({ writes: false });
    const p = new ShadowPipeline({ metrics: f.metrics, logger: f.logger, events: f.events });
    expect(p.openIntents()).toEqual([]);
    await p.resumeOpen();
    expect(() => p.retryDeadLetter()).toThrow(expect.objectContaining({ code: 'SHADOW' }));
  });
});
