import type { Logger } from '../core/logger.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { IntentRecord } from '../store/store.js';
import type { BotEvents } from './bot-events.js';
import type { BotMetrics } from './bot-metrics.js';
import type { UpdateEvaluation } from './evaluate-update.js';
import type { IntentPipeline, RecordedCounts } from './intent-pipeline.js';
import { RuntimeError } from './runtime-error.js';

export type ShadowPipelineDeps = {
  readonly metrics: BotMetrics;
  readonly logger: Logger;
  readonly events: BotEvents;
};

/**
 * The pipeline of a shadow bot: each intent is counted, logged and emitted (`shadow-intent`), and
 * nothing is written or submitted, so a later real run is unaffected.
 */
export class ShadowPipeline implements IntentPipeline {
  readonly #d: ShadowPipelineDeps;

  constructor(deps: ShadowPipelineDeps) {
    this.#d = deps;
  }

  submitEvent(evaluation: UpdateEvaluation): Promise<RecordedCounts> {
    for (const intent of evaluation.intents)
      this.#wouldSubmit(intent, evaluation.transaction.updateId);
    return Promise.resolve({ inserted: 0, existing: 0 });
  }

  submitIntents(intents: readonly Intent[]): Promise<void> {
    for (const intent of intents) this.#wouldSubmit(intent, undefined);
    return Promise.resolve();
  }

  retryDeadLetter(): IntentRecord {
    throw new RuntimeError(
      'SHADOW',
      'a shadow bot submits nothing; retry dead letters with the real bot',
    );
  }

  openIntents(): readonly IntentRecord[] {
    return [];
  }

  resumeOpen(): Promise<void> {
    return Promise.resolve();
  }

  #wouldSubmit(intent: Intent, updateId: string | undefined): void {
    this.#d.metrics.shadowIntents += 1;
    this.#d.logger.info(
      {
        ruleId: intent.ruleId,
        commandId: intent.commandId,
        offset: intent.offset,
        ...(updateId === undefined ? {} : { updateId }),
        actionIndex: intent.actionIndex,
        actAs: intent.actAs,
        command: intent.command,
        shadow: true,
      },
      'shadow: would submit',
    );
    this.#d.events.emit('shadow-intent', intent);
  }
}
