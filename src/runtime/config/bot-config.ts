import type { AuthConfig } from '../../ledger/auth/create-auth-provider.js';
import type { RetryOptions } from '../../rules/rule-options.js';

/**
 * The validated, defaulted and frozen `bot.config.yaml` (see `loadBotConfig`). Durations are in
 * milliseconds and every path is absolute (resolved against the config file's directory).
 */
export type BotConfig = {
  /** The absolute path of the file it was loaded from. */
  readonly file: string;
  readonly ledger: LedgerConfig;
  /** Party aliases with fixed ids (alias → party id). Embedded mode adds the allocated ones. */
  readonly parties: Readonly<Record<string, string>>;
  /** Rule files or directories of rule files, absolute. */
  readonly rules: readonly string[];
  /** Rule test files or directories of them (`ledgerbot test` without paths), absolute. */
  readonly tests: readonly string[];
  /**
   * The state directory (the SQLite store, unless `postgres`; the caches either way), how long
   * finished intents stay in the journal, and the PostgreSQL store when there is one.
   */
  readonly state: {
    readonly dir: string;
    readonly retentionMs: number;
    readonly postgres?: PostgresConfig;
  };
  readonly start: StartPosition;
  readonly submission: SubmissionConfig;
  /** Share the rules with the other instances of this fleet (requires `state.postgres`). */
  readonly fleet?: FleetConfig;
  /** The health, readiness and metrics endpoint; absent: no HTTP server. */
  readonly http?: HttpConfig;
  readonly log: LogConfig;
};

/** The journal in PostgreSQL instead of the state directory's SQLite file. */
export type PostgresConfig = {
  /** `postgres://user:password@host:port/database`: a secret (never shown in full). */
  readonly url: string;
  readonly schema: string;
  readonly poolSize: number;
};

/**
 * A fleet: instances with the same `state.postgres` schema and fleet name divide the rules
 * between them, one owner per rule under a lease (docs/operations.md, "Fleet").
 */
export type FleetConfig = {
  readonly name: string;
  /** How long a lease lasts unrenewed; a member renews every third of it. */
  readonly leasePeriodMs: number;
};

export type LedgerConfig = {
  readonly endpoint: LedgerEndpoint;
  /** The Ledger API user the bot submits as. */
  readonly userId: string;
  readonly auth: AuthConfig;
  readonly tls?: TlsFiles;
  readonly apiVersion: ApiVersion;
  /**
   * `ledger.packages`: DAR or DALF files, or directories of them (absolute), whose packages the
   * rules are type-checked against besides the participant's. Read by the CLI, not here.
   */
  readonly packages: readonly ConfiguredPath[];
  /** Websocket keep-alive ping period (Canton closes a socket idle for 60 s); 0: no pings. */
  readonly pingIntervalMs: number;
  /**
   * How long `run` waits at start for a participant that does not answer (retrying with
   * backoff) before it exits 1; absent: until it answers or the bot is stopped.
   */
  readonly startTimeoutMs?: number;
};

export type ApiVersion = '3.4' | '3.5';

export type LedgerEndpoint =
  | { readonly kind: 'url'; readonly url: string }
  | {
      /** Start the sandbox in-process with these models and allocate these party aliases. */
      readonly kind: 'embedded';
      readonly models: readonly string[];
      readonly parties: readonly string[];
    };

/** A path the config names, absolute, with where the file names it (for messages about it). */
export type ConfiguredPath = {
  readonly path: string;
  /** `file:line:col` of the entry in the config file. */
  readonly at: string;
};

/** Paths of PEM files (absolute); read by the CLI, not here. */
export type TlsFiles = {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
};

/**
 * Where a bot without a checkpoint begins (see runtime/start-offset.ts): the ledger end
 * (`checkpoint` is the older name of `ledger-end`), the beginning, or after a given offset. A bot
 * with a checkpoint resumes from it, unless it is reset (`run --reset-checkpoint`).
 */
export type StartPosition =
  | { readonly kind: 'checkpoint' }
  | { readonly kind: 'ledger-end' }
  | { readonly kind: 'begin' }
  | { readonly kind: 'offset'; readonly offset: number };

export type SubmissionConfig = {
  /** Submissions in flight at once, over all rules. */
  readonly maxInFlight: number;
  /** How long to wait for a completion before resubmitting with the same commandId. */
  readonly completionTimeoutMs: number;
  /** The rules' default retry policy (`loadRules`' `defaultRetry`); each rule may override it. */
  readonly retry: RetryOptions;
  readonly dedup: DedupConfig;
};

/**
 * `offset`: anchor dedup at the justifying offset (falling back to a duration of `fallbackMs`
 * when the offset is pruned or too old). `duration`: always a DeduplicationDuration of `valueMs`.
 */
export type DedupConfig =
  | { readonly mode: 'offset'; readonly fallbackMs: number }
  | { readonly mode: 'duration'; readonly valueMs: number };

export type HttpConfig = {
  /** 0 picks a free port. */
  readonly port: number;
  readonly host: string;
  /**
   * Bearer token for /status, /rules/* and /dead-letters* (a secret: use `${ENV}`; never logged).
   * Absent: those endpoints need no token.
   */
  readonly token?: string;
  /** /readyz fails while ledger end minus the processed offset exceeds this (default 1000). */
  readonly readyMaxLag: number;
  /**
   * The ops API and the console only look: every state-changing call (pause, resume, retry,
   * drop, reload, run-slot) answers 403 READ_ONLY. Default false.
   */
  readonly readOnly: boolean;
  /**
   * Host names (without port) a loopback-bound server without a token also answers, besides
   * localhost and 127.x.x.x (a reverse proxy that keeps the client's Host). Default none.
   */
  readonly allowedHosts: readonly string[];
};

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export type LogConfig = {
  readonly level: LogLevel;
  /** true: pino-pretty lines; false: JSON always; absent: pretty only on a terminal. */
  readonly pretty?: boolean;
};
