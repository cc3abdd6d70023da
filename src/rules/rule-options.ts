/**
 * Retry policy of the rule's submissions (durations in ms). A field the rule leaves out comes
 * from the config's `submission.retry`, else from DEFAULTS.retry (core/defaults.ts).
 */
export type RetryOptions = {
  /**
   * Attempts in total, including the first.
   * @default 10 (DEFAULTS.retry.maxAttempts)
   */
  readonly maxAttempts: number;
  /**
   * Delay before the first retry.
   * @default 1s (DEFAULTS.retry.initialDelayMs)
   */
  readonly initialDelayMs: number;
  /**
   * Cap of the exponential backoff.
   * @default 1m (DEFAULTS.retry.maxDelayMs)
   */
  readonly maxDelayMs: number;
  /**
   * Give up (dead-letter) this long after the intent was recorded.
   * @default 1h (DEFAULTS.retry.deadlineMs)
   */
  readonly deadlineMs: number;
};

/** Token bucket for the rule's submissions. */
export type RateLimitOptions = {
  /**
   * Sustained submissions per second.
   * @default 10 (DEFAULTS.rule.rateLimit.perSecond)
   */
  readonly perSecond: number;
  /**
   * Bucket size.
   * @default 20 (DEFAULTS.rule.rateLimit.burst)
   */
  readonly burst: number;
};

/** A rule's `options`: how the runtime submits its intents (evaluation hands them on with each). */
export type RuleOptions = {
  readonly retry: RetryOptions;
  readonly rateLimit: RateLimitOptions;
  /**
   * Submissions of this rule in flight at once.
   * @default 4 (DEFAULTS.rule.concurrency)
   */
  readonly concurrency: number;
};
