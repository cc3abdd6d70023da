import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { JsTransaction } from '../ledger/wire/wire-types.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { RuleIndex } from '../rules/rule-index.js';
import type { BotEvents } from './bot-events.js';
import type { BotMetrics } from './bot-metrics.js';
import { evaluateUpdate, type UpdateEvaluation } from './evaluate-update.js';
import type { IntentPipeline, RecordedCounts } from './intent-pipeline.js';

export type TransactionIngestDeps = {
  readonly parties: Readonly<Record<string, string>>;
  /** See BotOptions.packageNameOf. */
  readonly packageNameOf?: (packageId: string) => string | undefined;
  readonly clock: Clock;
  readonly metrics: BotMetrics;
  readonly logger: Logger;
  readonly events: BotEvents;
  readonly pipeline: IntentPipeline;
};

export type IngestOptions = {
  /** The rules to evaluate with: the live index, or a resumed rule's own. */
  readonly index: RuleIndex;
  /** See EvaluateUpdateContext.live and IntentPipeline.submitEvent. */
  readonly live: boolean;
  readonly rekey?: (intents: readonly Intent[], transaction: JsTransaction) => Intent[];
};

/**
 * One transaction through the bot: evaluated (`evaluateUpdate`), its rule errors reported, its
 * intents handed to the pipeline. The live stream, a resumed rule's replay and a pruning
 * recovery all take this path.
 */
export class TransactionIngest {
  readonly #d: TransactionIngestDeps;

  constructor(deps: TransactionIngestDeps) {
    this.#d = deps;
  }

  ingest(tx: JsTransaction, offset: number, options: IngestOptions): Promise<RecordedCounts> {
    const evaluation = evaluateUpdate(tx, offset, {
      index: options.index,
      parties: this.#d.parties,
      ...(this.#d.packageNameOf === undefined ? {} : { packageNameOf: this.#d.packageNameOf }),
      now: this.#d.clock.now(),
      metrics: this.#d.metrics,
      live: options.live,
      ...(options.rekey === undefined ? {} : { rekey: options.rekey }),
    });
    this.#report(evaluation);
    return this.#d.pipeline.submitEvent(evaluation, options.live);
  }

  #report(evaluation: UpdateEvaluation): void {
    const { transaction: tx, offset } = evaluation;
    for (const e of evaluation.errors) {
      this.#d.logger.warn(
        {
          ruleId: e.ruleId,
          updateId: tx.updateId,
          offset,
          errorCode: e.code,
          file: e.pos.file,
          line: e.pos.line,
          col: e.pos.col,
          phase: e.phase,
          ...(e.actionIndex === null ? {} : { actionIndex: e.actionIndex }),
          ...(e.expression === null ? {} : { expression: e.expression }),
          detail: e.message,
        },
        'rule evaluation failed',
      );
      this.#d.events.emit('rule-error', {
        ruleId: e.ruleId,
        updateId: tx.updateId,
        offset,
        message: e.message,
      });
    }
  }
}
