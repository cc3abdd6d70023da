import { describe, expect, it } from 'vitest';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { apiError } from './fake-ledger.js';

describe('BotMetrics: why a stream is down', () => {
  it('says a refused token or missing rights as such, anything else by its message, until it opens', () => {
    const m = new BotMetrics();
    expect(m.updatesProblem).toBeUndefined();
    // Canton redacts it: code NA, category -1; the gRPC code and HTTP status remain.
    m.streamFailed(
      'updates',
      apiError('NA', -1, 16, 'A security-sensitive error has been received', {}, 401),
    );
    expect(m.updatesProblem).toBe(
      "the participant rejected the bot's token: check ledger.auth (the token, its audience, its expiry)",
    );
    m.streamFailed(
      'updates',
      apiError('NA', -1, 7, 'A security-sensitive error has been received', {}, 403),
    );
    expect(m.updatesProblem).toMatch(/^the participant denied the bot's user the rights it needs/);
    m.streamFailed('updates', new Error('WS /v2/updates: connect ECONNREFUSED 127.0.0.1:7575'));
    expect(m.updatesProblem).toBe('WS /v2/updates: connect ECONNREFUSED 127.0.0.1:7575');
    // The completions stream's failures are its own.
    m.streamFailed('completions', new Error('x'));
    m.streamOpened('updates');
    expect(m.updatesProblem).toBeUndefined();
  });
});
