import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Random } from '../../core/random.js';
import type { LedgerEngine } from '../engine/ledger-engine.js';
import type { CommandPipeline } from './command-pipeline.js';
import type { DedupTracker } from './dedup-tracker.js';
import type { FaultInjector } from './fault-injector.js';
import type { SandboxAuth } from './sandbox-auth.js';
import type { StreamHub } from './stream-hub.js';

export type SandboxLimits = {
  /** http-list-max-elements-limit (NOTES.md §3). */
  readonly listMaxElements: number;
  /** http-list-wait-time: the idle cut-off of list endpoints. */
  readonly listWaitMs: number;
  /** How long submit-and-wait waits for a completion before REQUEST_TIME_OUT. */
  readonly submitAndWaitTimeoutMs: number;
  /** Quiet time before an open-ended stream gets an OffsetCheckpoint. */
  readonly checkpointIntervalMs: number;
  /** Default and maximum page size of active-contracts-page. */
  readonly defaultPageSize: number;
  readonly maxPageSize: number;
  /**
   * pekko-http's server idle-timeout (60 s on Canton): a websocket with no frame either way for
   * this long is closed, and so is an idle keep-alive connection. 0 turns it off.
   */
  readonly idleTimeoutMs: number;
  /**
   * Bytes a websocket may hold unsent before its stream stops sending its backlog until the
   * client reads: TCP backpressure, as Canton's streams have.
   */
  readonly streamBufferBytes: number;
};

/** Everything the route handlers and stream openers share. */
export type SandboxContext = {
  readonly engine: LedgerEngine;
  readonly auth: SandboxAuth;
  readonly pipeline: CommandPipeline;
  readonly hub: StreamHub;
  readonly faults: FaultInjector;
  readonly dedup: DedupTracker;
  readonly clock: Clock;
  readonly random: Random;
  readonly logger: Logger;
  readonly participantId: string;
  /** The part of the participant id before `::`, as Canton's error contexts name it. */
  readonly participantName: string;
  readonly limits: SandboxLimits;
  /** Canton's version string the sandbox reports. */
  readonly version: string;
  /** Every package's `ArchivePayload` by id, in the order `GET /v2/packages` lists them. */
  readonly archives: ReadonlyMap<string, Uint8Array>;
  /** A fresh 32-hex-char trace id. */
  traceId(): string;
  /** Record time of the last prune, 0 if never pruned. */
  prunedAtMs: number;
};
