import { throwIfAborted } from '../core/abort-error.js';
import type { CompiledRule, RefKind, TemplateRef } from '../rules/compiled-rule.js';
import type { EvaluationResult, Intent, RuleEvaluationError } from '../rules/evaluation-result.js';
import { SlotEvaluation } from '../rules/slot-evaluation.js';
import { ScheduleError } from './schedule-error.js';

/** An active contract as a slot's evaluation reads it: the CreatedEvent of the ACS entry. */
export type SlotContract = Parameters<SlotEvaluation['contract']>[0];

/**
 * The ledger reads a slot needs, kept structural so this layer does not import the ledger client
 * (the runtime adapts `LedgerClient` to it).
 */
export type SlotSnapshotSource = {
  /** The ledger end: the offset the slot's snapshot is read at. */
  ledgerEnd(signal?: AbortSignal): Promise<number>;
  /**
   * The active contracts of `template` that `party` (an id) sees at `offset`, streamed: memory
   * stays bounded by a page, however many contracts there are. With `refKind: 'interface'`,
   * `template` is an interface: the contracts of every template implementing it, each with its
   * interface view.
   */
  activeContracts(
    query: {
      readonly offset: number;
      readonly party: string;
      readonly template: TemplateRef;
      readonly refKind: RefKind;
    },
    signal?: AbortSignal,
  ): AsyncIterable<SlotContract>;
};

export type SlotSubmitContext = {
  readonly ruleId: string;
  /** The slot time, epoch ms. */
  readonly slot: number;
  readonly snapshotOffset: number;
  readonly signal?: AbortSignal;
};

/**
 * Where a slot's intents go: the runtime's submission pipeline (the same limits, retries and dead
 * letters as event rules), or a printer for a dry run. `submitIntents` resolves once the intents
 * are durably recorded (in the journal), not once they complete: the slot record waits for
 * recording, the journal then carries each intent to a terminal state, across restarts too.
 * Intents already in the journal (a re-run slot) are left as they are.
 */
export type SlotIntentSink = {
  submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void>;
};

/** The slot records of the store (a structural subset of `Store`). */
export type SlotJournal = {
  getSlotRecord(ruleId: string):
    | {
        readonly lastCompletedSlot?: number;
        readonly inProgressSlot?: number;
        readonly snapshotOffset?: number;
      }
    | undefined;
  beginSlot(ruleId: string, slot: number, snapshotOffset?: number): unknown;
  completeSlot(ruleId: string, slot: number): unknown;
};

export type RunSlotOptions = {
  readonly source: SlotSnapshotSource;
  readonly sink: SlotIntentSink;
  /** Party alias → party id, from the bot config. */
  readonly parties: Readonly<Record<string, string>>;
  /**
   * The name of the package with this id, to find a contract's view of a `#name` interface
   * (`PackageCatalogue.packageNameOf`); without it, by `Module:Entity` alone.
   */
  readonly packageNameOf?: (packageId: string) => string | undefined;
  /** Absent (a dry run): the slot is neither marked begun nor completed. */
  readonly journal?: SlotJournal;
  /** Intents handed to the sink at once (default 100): bounds memory with many contracts. */
  readonly batchSize?: number;
  /** Rule evaluation errors kept in the result (default 20); all are counted. */
  readonly maxErrors?: number;
  readonly signal?: AbortSignal;
};

export type SlotRunResult = {
  readonly ruleId: string;
  readonly slot: number;
  readonly snapshotOffset: number;
  /** Whether the snapshot offset came from an earlier, interrupted run of this slot. */
  readonly resumed: boolean;
  /** Contracts read (0 without forEach). */
  readonly contracts: number;
  /** Intents handed to the sink. */
  readonly intents: number;
  /** Contracts (or slot firings) that failed to evaluate. */
  readonly errorCount: number;
  /** The first `maxErrors` of them. */
  readonly errors: readonly RuleEvaluationError[];
};

/**
 * Runs one slot of a schedule rule: reads the ledger end O (or, when an interrupted run of the same
 * slot recorded one, that O again, so the re-run sees the same snapshot and the ledger's
 * deduplication from O catches what the first run submitted), streams the `forEach` contracts
 * at O, evaluates the rule per contract with `now` = the slot time (with `forEach.batch`, per
 * batch of selected contracts: batches span the pages of the stream, see SlotEvaluation), and
 * hands the intents to the sink in batches. Without `forEach` the rule fires once. The journal
 * marks the slot begun before and completed after every intent is recorded; a crash in between
 * leaves it in progress, and the next start runs it again with the same commandIds.
 */
export async function runSlot(
  rule: CompiledRule,
  slot: number,
  options: RunSlotOptions,
): Promise<SlotRunResult> {
  const trigger = rule.trigger;
  if (trigger.kind !== 'schedule') {
    throw new ScheduleError('NOT_A_SCHEDULE_RULE', `rule "${rule.id}" is not a schedule rule`);
  }
  const { source, sink, journal, parties, signal } = options;
  const batchSize = Math.max(1, options.batchSize ?? 100);
  const maxErrors = options.maxErrors ?? 20;
  throwIfAborted(signal);

  const record = journal?.getSlotRecord(rule.id);
  const resumed = record?.inProgressSlot === slot && record.snapshotOffset !== undefined;
  const snapshotOffset =
    resumed && record.snapshotOffset !== undefined
      ? record.snapshotOffset
      : await source.ledgerEnd(signal);
  journal?.beginSlot(rule.id, slot, snapshotOffset);

  const context = {
    parties,
    snapshotOffset,
    ...(options.packageNameOf === undefined ? {} : { packageNameOf: options.packageNameOf }),
  };
  const at = new Date(slot);
  const submitContext: SlotSubmitContext = {
    ruleId: rule.id,
    slot,
    snapshotOffset,
    ...(signal === undefined ? {} : { signal }),
  };
  let batch: Intent[] = [];
  let intents = 0;
  let contracts = 0;
  let errorCount = 0;
  const errors: RuleEvaluationError[] = [];
  const evaluation = new SlotEvaluation(rule, at, context);
  const take = (result: EvaluationResult): void => {
    for (const error of result.errors) {
      errorCount++;
      if (errors.length < maxErrors) errors.push(error);
    }
    batch.push(...result.intents);
  };
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const out = batch;
    batch = [];
    intents += out.length;
    await sink.submitIntents(out, submitContext);
  };

  const forEach = trigger.forEach;
  if (forEach !== null) {
    const party = parties[forEach.party];
    if (party === undefined) {
      throw new ScheduleError(
        'UNKNOWN_PARTY',
        `rule "${rule.id}" reads the contracts of party alias "${forEach.party}", which the bot config does not define; add it under parties:`,
      );
    }
    const stream = source.activeContracts(
      { offset: snapshotOffset, party, template: forEach.template, refKind: forEach.refKind },
      signal,
    );
    for await (const contract of stream) {
      contracts++;
      take(evaluation.contract(contract));
      if (batch.length >= batchSize) await flush();
    }
  }
  // Without forEach the rule's one firing; with forEach.batch, the batches still open.
  take(evaluation.end());
  await flush();
  throwIfAborted(signal);
  journal?.completeSlot(rule.id, slot);
  return {
    ruleId: rule.id,
    slot,
    snapshotOffset,
    resumed,
    contracts,
    intents,
    errorCount,
    errors,
  };
}
