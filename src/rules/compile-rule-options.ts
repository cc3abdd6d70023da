import { DEFAULTS } from '../core/defaults.js';
import { formatDuration } from '../core/duration.js';
import { isRecord } from './is-record.js';
import type { RuleOptions } from './rule-options.js';
import type { RuleScope } from './rule-scope.js';

/**
 * A rule's retry, rate limit and concurrency. A retry field the rule writes wins; one it leaves
 * out comes from the bot config's `submission.retry` (`defaultRetry`), else from DEFAULTS.retry,
 * which the schema has already filled in.
 */
export function compileRuleOptions(scope: RuleScope): RuleOptions | null {
  const retry = isRecord(scope.raw.retry) ? scope.raw.retry : {};
  const rate = isRecord(scope.raw.rateLimit) ? scope.raw.rateLimit : {};
  const path = scope.p('retry');
  // The schema's defaults are already filled in, so the YAML document tells what the user wrote.
  const base = scope.file.defaultRetry;
  const written = (key: string): boolean => scope.at.node([...path, key]) !== undefined;
  const pick = <T>(key: string, value: T, fallback: T | undefined): T =>
    written(key) || fallback === undefined ? value : fallback;
  const initialDelayMs = pick(
    'initialDelay',
    scope.duration(retry.initialDelay, [...path, 'initialDelay'], DEFAULTS.retry.initialDelayMs),
    base?.initialDelayMs,
  );
  const maxDelayMs = pick(
    'maxDelay',
    scope.duration(retry.maxDelay, [...path, 'maxDelay'], DEFAULTS.retry.maxDelayMs),
    base?.maxDelayMs,
  );
  const deadlineMs = pick(
    'deadline',
    scope.duration(retry.deadline, [...path, 'deadline'], DEFAULTS.retry.deadlineMs),
    base?.deadlineMs,
  );
  if (initialDelayMs === null || maxDelayMs === null || deadlineMs === null) return null;
  if (maxDelayMs < initialDelayMs) {
    scope.error(
      scope.at.pos([...path, 'maxDelay']),
      'BAD_VALUE',
      `retry.maxDelay (${String(retry.maxDelay)}) is shorter than retry.initialDelay (${typeof retry.initialDelay === 'string' ? retry.initialDelay : formatDuration(DEFAULTS.retry.initialDelayMs)})`,
      'maxDelay caps the growing delay between retries, so it is at least initialDelay',
    );
    return null;
  }
  return {
    retry: {
      maxAttempts: pick(
        'maxAttempts',
        typeof retry.maxAttempts === 'number' ? retry.maxAttempts : DEFAULTS.retry.maxAttempts,
        base?.maxAttempts,
      ),
      initialDelayMs,
      maxDelayMs,
      deadlineMs,
    },
    rateLimit: {
      perSecond:
        typeof rate.perSecond === 'number' ? rate.perSecond : DEFAULTS.rule.rateLimit.perSecond,
      burst: typeof rate.burst === 'number' ? rate.burst : DEFAULTS.rule.rateLimit.burst,
    },
    concurrency:
      typeof scope.raw.concurrency === 'number' ? scope.raw.concurrency : DEFAULTS.rule.concurrency,
  };
}
