import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/core/defaults.js';
import { compileRuleOptions } from '../../src/rules/compile-rule-options.js';
import { oneRule, ruleScope } from './rule-scope-fixture.js';

const CONFIG_RETRY = {
  maxAttempts: 3,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  deadlineMs: 120_000,
};

describe('compileRuleOptions', () => {
  it('without a retry of the rule or the config, takes DEFAULTS', () => {
    const { scope } = ruleScope(oneRule());
    expect(compileRuleOptions(scope)).toEqual({
      retry: DEFAULTS.retry,
      rateLimit: DEFAULTS.rule.rateLimit,
      concurrency: DEFAULTS.rule.concurrency,
    });
  });

  it('takes the config retry for every field the rule leaves out', () => {
    const { scope } = ruleScope(oneRule(), { defaultRetry: CONFIG_RETRY });
    expect(compileRuleOptions(scope)?.retry).toEqual(CONFIG_RETRY);
  });

  it("keeps each field the rule writes, over the config's", () => {
    const { scope } = ruleScope(oneRule('    retry: { maxAttempts: 7, maxDelay: 2m }'), {
      defaultRetry: CONFIG_RETRY,
    });
    expect(compileRuleOptions(scope)?.retry).toEqual({
      ...CONFIG_RETRY,
      maxAttempts: 7,
      maxDelayMs: 120_000,
    });
  });

  it('refuses a maxDelay shorter than the initialDelay, at the maxDelay', () => {
    const { scope, problems } = ruleScope(
      oneRule('    retry: { initialDelay: 10s, maxDelay: 1s }'),
    );
    expect(compileRuleOptions(scope)).toBeNull();
    expect(scope.ok).toBe(false);
    expect(problems).toMatchObject([
      {
        code: 'BAD_VALUE',
        line: 8,
        col: 43,
        message: 'retry.maxDelay (1s) is shorter than retry.initialDelay (10s)',
      },
    ]);
  });

  it('reads rate limit and concurrency as written', () => {
    const { scope } = ruleScope(
      oneRule('    rateLimit: { perSecond: 0.5, burst: 2 }\n    concurrency: 1'),
    );
    expect(compileRuleOptions(scope)).toMatchObject({
      rateLimit: { perSecond: 0.5, burst: 2 },
      concurrency: 1,
    });
  });
});
