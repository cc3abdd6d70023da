/**
 * The one table of ledgerbot's defaults. The library (`createBot`, `loadRules`), the config file
 * (`bot.config.yaml`) and both published JSON Schemas read their numbers from here, so a library
 * user who leaves an option out and `ledgerbot run` with an empty section behave the same.
 *
 * Durations are milliseconds; the schemas render them as text (`formatDuration`).
 */
export const DEFAULTS = {
  submission: {
    /** Intents worked on at once, over all rules. */
    maxInFlight: 32,
    /** How long to wait for a completion before resubmitting under the same commandId. */
    completionTimeoutMs: 30_000,
    /** The dedup duration used when the participant refuses the offset anchor. */
    dedupFallbackMs: 24 * 3_600_000,
  },
  /**
   * The retry policy of a rule that states none. The config's `submission.retry` replaces it for
   * every rule of that bot that states none (a rule's own `retry:` always wins).
   */
  retry: { maxAttempts: 10, initialDelayMs: 1_000, maxDelayMs: 60_000, deadlineMs: 3_600_000 },
  /** How long `stop()` waits for submissions already out. */
  stopGraceMs: 10_000,
  /** Backoff between restarts of a stream after an auth failure. */
  restartBackoff: { initialMs: 1_000, maxMs: 60_000 },
  /** How long finished intents stay in the journal. */
  retentionMs: 7 * 86_400_000,
  ledger: {
    apiVersion: '3.5',
    /** Websocket ping interval; 0 turns pings off. */
    pingIntervalMs: 25_000,
  },
  ops: { host: '127.0.0.1', readyMaxLag: 1000 },
  logLevel: 'info',
  stateDir: '.state',
  testsDir: 'tests',
  start: 'checkpoint',
  /** What a rule that leaves these out gets (rule files and their schema). */
  rule: {
    /** Submissions of one rule per second, sustained, and at once after a quiet time. */
    rateLimit: { perSecond: 10, burst: 20 },
    /** Submissions of one rule in flight at once. */
    concurrency: 4,
    /** Missed schedule slots run after a pause (`catchUp: all`), at most. */
    maxCatchUp: 10,
    /** `forEach.batch`: contracts per batch, and the fewest a batch fires with. */
    batch: { size: 100, min: 1 },
  },
  /** The command line's own defaults. */
  cli: {
    /** The config a command reads without --config. */
    configFile: 'bot.config.yaml',
    /** The embedded participant's port (`ledgerbot sandbox`, `init`'s URL). */
    sandboxPort: 7575,
  },
  /** Dead letters one list shows (ops API `GET /dead-letters`, `ledgerbot dead-letters list`). */
  deadLetterListLimit: 100,
  /** The PostgreSQL store (`state.postgres`). */
  postgres: {
    schema: 'ledgerbot',
    /** One connection commits, the others answer the operator's reads. */
    poolSize: 4,
    connectTimeoutMs: 10_000,
  },
  /** A fleet (`fleet:`): how long a rule's lease lasts without renewal (renewed every third). */
  fleet: {
    leasePeriodMs: 15_000,
  },
  /** The SQLite store. */
  store: {
    /** How long a statement waits for another connection's lock. */
    busyTimeoutMs: 5000,
    /** Intents or dead letters one `listIntents` / `listDeadLetters` returns without a `limit`. */
    listLimit: 1000,
  },
} as const;
