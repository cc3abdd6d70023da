import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../core/clock.js';

/** SQLite's own default: the WAL pages after which a commit checkpoints inline. */
const INLINE_AUTOCHECKPOINT_PAGES = 1000;

export type WalCheckpointerOptions = {
  readonly db: BetterSqlite3.Database;
  /** The database file the thread opens its own connection to. */
  readonly path: string;
  readonly clock: Clock;
  readonly busyTimeoutMs: number;
  /** The least time between two checkpoints the thread is asked for. @default 100 */
  readonly intervalMs?: number;
  /**
   * WAL frames at which the writer checkpoints once itself, after its next commit (see
   * `afterCommit`). @default 10,000 (about 40 MB)
   */
  readonly inlineAtFrames?: number;
  /** How long `close` waits for the thread to close its connection. @default 10,000 */
  readonly closeTimeoutMs?: number;
  /** Told once if the thread is given up (SQLite's own checkpoints take over). */
  readonly onFailure?: (reason: string) => void;
};

/** The WAL's frames when a checkpoint began, or why it failed. */
type CheckpointAnswer = { readonly log: number } | { readonly error: string };

/** The running thread, and the flag it sets to 1 once its connection is closed (see `close`). */
type Thread = { readonly worker: Worker; readonly closed: Int32Array };

/**
 * Runs the SQLite store's WAL checkpoints on a thread of its own, with its own connection, so
 * that the writer's event loop never waits for them. A checkpoint copies the WAL into the
 * database file and, with `synchronous = NORMAL`, fsyncs both: it is where that setting pays
 * for its durability, and inline (SQLite's automatic checkpoint runs inside the commit that
 * crosses 1,000 pages) it blocked the bot's event loop. The file's guarantees are SQLite's
 * either way: a checkpoint from another connection is the same operation.
 *
 * A PASSIVE checkpoint from another connection copies what the WAL holds when it starts; the WAL
 * restarts from its beginning only at a commit that finds it wholly copied, which a writer that
 * commits while every checkpoint runs may never find. So once a checkpoint reports the WAL at
 * `inlineAtFrames`, the writer checkpoints once itself after its next commit (the few frames
 * since), and the commit after restarts the WAL.
 *
 * The thread starts at the first commit that asks for a checkpoint, so a short-lived store (a
 * CLI command) never starts one. If the thread cannot open the file or fails, the writer goes
 * back to SQLite's automatic checkpoints: checkpoints are housekeeping, never correctness.
 */
export class WalCheckpointer {
  readonly #db: BetterSqlite3.Database;
  readonly #path: string;
  readonly #clock: Clock;
  readonly #busyTimeoutMs: number;
  readonly #intervalMs: number;
  readonly #inlineAtFrames: number;
  readonly #closeTimeoutMs: number;
  readonly #onFailure: ((reason: string) => void) | undefined;
  #thread: Thread | undefined;
  #inFlight = false;
  #lastAskedAt = Number.NEGATIVE_INFINITY;
  #inlineDue = false;
  /** The thread failed: SQLite's automatic checkpoints again. */
  #failed: string | undefined;
  #checkpoints = 0;
  #inlines = 0;
  #walFrames = 0;

  constructor(options: WalCheckpointerOptions) {
    this.#db = options.db;
    this.#path = options.path;
    this.#clock = options.clock;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#intervalMs = options.intervalMs ?? 100;
    this.#inlineAtFrames = options.inlineAtFrames ?? 10_000;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
    this.#onFailure = options.onFailure;
  }

  /** Why the thread was given up, if it was. */
  get failure(): string | undefined {
    return this.#failed;
  }

  /** Checkpoints the thread has reported done. */
  get checkpoints(): number {
    return this.#checkpoints;
  }

  /** Checkpoints the writer made itself (see `inlineAtFrames`). */
  get inlineCheckpoints(): number {
    return this.#inlines;
  }

  /** The WAL's frames when the thread's last checkpoint began. */
  get walFrames(): number {
    return this.#walFrames;
  }

  /** After each commit of the writer: asks the thread for a checkpoint when one is due. */
  afterCommit(): void {
    if (this.#failed !== undefined) return;
    // Never throws: it runs after a commit, and a throw there would read as a failed commit.
    try {
      this.#afterCommit();
    } catch (err) {
      this.#fail(`the checkpoints failed: ${(err as Error).message}`);
    }
  }

  #afterCommit(): void {
    if (this.#inlineDue) {
      this.#inlineDue = false;
      this.#inlines++;
      this.#db.pragma('wal_checkpoint(PASSIVE)');
    }
    if (this.#inFlight) return;
    const now = this.#clock.now();
    if (now - this.#lastAskedAt < this.#intervalMs) return;
    this.#lastAskedAt = now;
    this.#inFlight = true;
    (this.#thread ?? this.#start()).worker.postMessage('checkpoint');
  }

  /**
   * Stops the thread, synchronously (the store's `close` is): waits until it has closed its
   * connection, so that the writer's close is the last one and checkpoints and removes the WAL.
   */
  close(): void {
    const thread = this.#thread;
    if (thread === undefined) return;
    this.#thread = undefined;
    thread.worker.postMessage('close');
    Atomics.wait(thread.closed, 0, 0, this.#closeTimeoutMs);
    void thread.worker.terminate();
  }

  #start(): Thread {
    const closed = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        sqlite: createRequire(import.meta.url).resolve('better-sqlite3'),
        path: this.#path,
        busyTimeoutMs: this.#busyTimeoutMs,
        closed,
      },
    });
    // Never what keeps the process alive: the writer's close ends it.
    worker.unref();
    worker.on('message', (answer: CheckpointAnswer) => this.#answered(answer));
    worker.on('error', (err: Error) => this.#fail(err.message));
    worker.on('exit', (code) => {
      if (this.#thread?.worker === worker) {
        this.#fail(`the checkpoint thread exited (code ${code})`);
      }
    });
    this.#thread = { worker, closed };
    // From now on the thread checkpoints; the writer's commits no longer do.
    this.#db.pragma('wal_autocheckpoint = 0');
    return this.#thread;
  }

  #answered(answer: CheckpointAnswer): void {
    this.#inFlight = false;
    if ('error' in answer) {
      this.#fail(answer.error);
      return;
    }
    this.#checkpoints++;
    this.#walFrames = answer.log;
    if (answer.log >= this.#inlineAtFrames) this.#inlineDue = true;
  }

  #fail(reason: string): void {
    if (this.#failed !== undefined) return;
    this.#failed = reason;
    this.#inFlight = false;
    const thread = this.#thread;
    this.#thread = undefined;
    if (thread !== undefined) void thread.worker.terminate();
    try {
      // The writer may be closed already (a thread that failed while the store closed).
      if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // A connection that cannot take a pragma fails its next commit, which ends the bot: this
      // runs after a commit or in the thread's event, where a throw would do worse.
    }
    this.#onFailure?.(reason);
  }
}

/**
 * The thread (CommonJS, run by `eval`: no file of its own to find in dist/, the bundle or a
 * test run from src/). It loads better-sqlite3 from where the writer's resolves.
 */
const WORKER_SOURCE = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
(() => {
  const closed = workerData.closed;
  const done = () => { Atomics.store(closed, 0, 1); Atomics.notify(closed, 0); };
  let db;
  try {
    const Database = require(workerData.sqlite);
    db = new Database(workerData.path, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
  } catch (err) {
    parentPort.postMessage({ error: 'the checkpoint thread could not open the store: ' + err.message });
    done();
    return;
  }
  parentPort.on('message', (message) => {
    if (message === 'close') {
      try { db.close(); } finally { done(); parentPort.close(); }
      return;
    }
    try {
      const [result] = db.pragma('wal_checkpoint(PASSIVE)');
      parentPort.postMessage({ log: result.log });
    } catch (err) {
      parentPort.postMessage({ error: 'a checkpoint failed: ' + err.message });
    }
  });
})();
`;
