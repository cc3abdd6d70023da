import type { Clock } from '../../core/clock.js';
import type { Random } from '../../core/random.js';
import type { Completion, JsCommands } from '../../ledger/wire/wire-types.js';
import type { CommittedTransaction } from '../engine/committed-transaction.js';
import type { LedgerEngine } from '../engine/ledger-engine.js';
import {
  changeIdKey,
  duplicateCommandError,
  type DedupTracker,
  type RequestedDedup,
} from './dedup-tracker.js';
import { OK_STATUS, renderRejectionStatus } from './error-rendering.js';
import type { FaultInjector } from './fault-injector.js';
import {
  BodyDecodeError,
  missingField,
  parseDedupPeriod,
  type JsonObject,
} from './request-parsing.js';
import { CommandTranscoder } from './command-transcoder.js';
import type { Principal, SandboxAuth } from './sandbox-auth.js';
import { fromEngineError, type SandboxApiError } from './sandbox-api-error.js';

/** How a submission ended, as its completion says (or not, when the fault dropped it). */
export type SubmissionOutcome =
  | {
      readonly kind: 'accepted';
      readonly transaction: CommittedTransaction;
      readonly completion: Completion | undefined;
    }
  | { readonly kind: 'rejected'; readonly error: SandboxApiError; readonly completion: Completion };

export type Submission = {
  readonly submissionId: string;
  /** Settles when the command is processed; never rejects. */
  readonly outcome: Promise<SubmissionOutcome>;
};

export type CommandPipelineDeps = {
  readonly engine: LedgerEngine;
  readonly dedup: DedupTracker;
  readonly faults: FaultInjector;
  readonly auth: SandboxAuth;
  readonly clock: Clock;
  readonly random: Random;
  /** The participant name for error contexts. */
  readonly participant: string;
  /** Record time of the last prune (for duration-based dedup periods). */
  readonly prunedAtMs: () => number;
  /** 32 hex chars for the error's trace id. */
  readonly traceId: () => string;
};

type Prepared = {
  readonly commands: JsCommands;
  readonly userId: string;
  readonly actAs: readonly string[];
  readonly submissionId: string;
  readonly period: RequestedDedup;
  readonly key: string;
};

/**
 * The participant's submission path, in Canton's order: the JSON layer (body shape, then the Daml
 * values: CommandTranscoder), the command service's validation and rights, interpretation (its
 * errors are synchronous), the in-flight tracker, the deduplicator, commit and completion.
 * Synchronous failures throw; everything after interpretation ends in a completion (unless a
 * fault drops it). With a completion delay (a fault) everything from interpretation on happens
 * later, and its errors go to the completion.
 */
export class CommandPipeline {
  readonly #d: CommandPipelineDeps;
  readonly #transcoder: CommandTranscoder;

  constructor(deps: CommandPipelineDeps) {
    this.#d = deps;
    this.#transcoder = new CommandTranscoder(deps.engine);
  }

  submit(body: JsonObject, principal: Principal): Submission {
    const p = this.#prepare(body, principal);
    const injected = this.#d.faults.submitError();
    if (injected !== undefined) throw withCorrelation(injected, p.submissionId);
    const delay = this.#d.faults.completionDelayMs();
    if (delay <= 0) {
      return { submissionId: p.submissionId, outcome: Promise.resolve(this.#process(p, true)) };
    }
    this.#d.dedup.begin(p.key, p.submissionId);
    const outcome = new Promise<SubmissionOutcome>((resolve) => {
      this.#d.clock.setTimeout(() => resolve(this.#process(p, false)), delay);
    });
    return { submissionId: p.submissionId, outcome };
  }

  #prepare(body: JsonObject, principal: Principal): Prepared {
    // What tapir's decoder refuses (400 text/plain), before anything else.
    const commandId = body.commandId;
    if (commandId !== undefined && commandId !== null && typeof commandId !== 'string')
      throw new BodyDecodeError(`expected a string at 'commandId'`);
    const cmds = body.commands;
    if (cmds !== undefined && cmds !== null && !Array.isArray(cmds))
      throw new BodyDecodeError(`expected a list at 'commands'`);
    const actAs = body.actAs;
    if (
      actAs !== undefined &&
      actAs !== null &&
      (!Array.isArray(actAs) || actAs.some((a) => typeof a !== 'string'))
    ) {
      throw new BodyDecodeError(`expected a list of strings at 'actAs'`);
    }
    const readAs = body.readAs ?? [];
    if (!Array.isArray(readAs) || readAs.some((a) => typeof a !== 'string')) {
      throw new BodyDecodeError(`expected a list of strings at 'readAs'`);
    }
    const given = body.userId;
    if (given !== undefined && given !== null && typeof given !== 'string') {
      throw new BodyDecodeError(`expected a string at 'userId'`);
    }
    const period = parseDedupPeriod(body.deduplicationPeriod);
    // The JSON layer transcodes the Daml values before the command service sees the request.
    const transcoded = Array.isArray(cmds) ? this.#transcoder.transcode(cmds) : [];
    // The command service's validation.
    if (commandId === undefined || commandId === null || commandId === '')
      throw missingField('command_id');
    if (transcoded.length === 0) throw missingField('commands');
    if (!Array.isArray(actAs) || actAs.length === 0) throw missingField('act_as');
    const userId = given === undefined || given === null || given === '' ? principal.userId : given;
    if (userId === undefined || userId === '') throw missingField('user_id');
    this.#d.auth.requireUser(principal, userId);
    this.#d.auth.requireActAs(principal, actAs as string[]);
    this.#d.auth.requireReadAs(principal, readAs as string[]);
    const sid = body.submissionId;
    const submissionId = typeof sid === 'string' && sid !== '' ? sid : this.#d.random.uuid();
    const commands = {
      ...(body as JsCommands),
      commands: transcoded as JsCommands['commands'],
      userId,
      submissionId,
    };
    return {
      commands,
      userId,
      actAs: actAs as string[],
      submissionId,
      period,
      key: changeIdKey(userId, actAs as string[], commandId),
    };
  }

  /**
   * `sync`: interpretation errors and SUBMISSION_ALREADY_IN_FLIGHT are thrown (the submit call
   * fails), as Canton does; the change is then marked in flight here. Otherwise `submit` marked it.
   */
  #process(p: Prepared, sync: boolean): SubmissionOutcome {
    const d = this.#d;
    // Canton interprets before it deduplicates: a resubmitted exercise whose contract the first
    // attempt archived fails here with CONTRACT_NOT_FOUND, not as a duplicate.
    const interpreted = d.engine.interpret(p.commands, { userId: p.userId });
    if (!interpreted.ok) {
      const err = fromEngineError(interpreted.error, true);
      if (sync) throw withCorrelation(err, p.submissionId);
      d.dedup.end(p.key);
      return this.#reject(p, err, undefined);
    }
    if (sync) d.dedup.begin(p.key, p.submissionId);
    const check = d.dedup.check(p.key, p.period, d.clock.now(), {
      offset: d.engine.prunedUpToInclusive(),
      atMs: d.prunedAtMs(),
    });
    if (check.kind === 'duplicate') {
      d.dedup.end(p.key);
      return this.#reject(p, duplicateCommandError(check), check.reportedOffset);
    }
    if (check.kind === 'too-early') {
      d.dedup.end(p.key);
      return this.#reject(p, check.error, undefined);
    }
    const injected = d.faults.completionError();
    if (injected !== undefined) {
      d.dedup.end(p.key);
      return this.#reject(p, injected, check.reportedOffset);
    }
    const tx = d.engine.commit(interpreted.value);
    d.dedup.end(p.key, { offset: tx.offset, atMs: d.clock.now(), submissionId: p.submissionId });
    // A dropped completion is lost on its way to the clients (and to submit-and-wait), not
    // from the participant's index: a later read from an earlier offset finds it, as on Canton.
    const lost = d.faults.dropCompletion();
    const completion = d.engine.recordCompletion({
      commandId: p.commands.commandId,
      status: OK_STATUS,
      updateId: tx.updateId,
      userId: p.userId,
      actAs: [...p.actAs],
      submissionId: p.submissionId,
      deduplicationPeriod: { DeduplicationOffset: { value: check.reportedOffset } },
      paidTrafficCost: 0,
      transaction: tx,
      ...(lost ? { lostInTransit: true } : {}),
    });
    return { kind: 'accepted', transaction: tx, completion: lost ? undefined : completion };
  }

  #reject(p: Prepared, error: SandboxApiError, dedupOffset: number | undefined): SubmissionOutcome {
    const d = this.#d;
    const status = renderRejectionStatus(error, {
      participant: d.participant,
      traceId: d.traceId(),
      correlationId: p.submissionId,
    });
    const completion = d.engine.recordCompletion({
      commandId: p.commands.commandId,
      status,
      updateId: '',
      userId: p.userId,
      actAs: [...p.actAs],
      submissionId: p.submissionId,
      deduplicationPeriod:
        dedupOffset === undefined ? { Empty: {} } : { DeduplicationOffset: { value: dedupOffset } },
      paidTrafficCost: 0,
    });
    return { kind: 'rejected', error: withCorrelation(error, p.submissionId), completion };
  }
}

function withCorrelation(err: SandboxApiError, submissionId: string): SandboxApiError {
  err.correlationId = submissionId;
  return err;
}
