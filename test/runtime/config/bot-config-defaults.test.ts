import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../../src/core/defaults.js';
import { parseDuration } from '../../../src/core/duration.js';
import { BOT_CONFIG_DEFAULTS } from '../../../src/runtime/config/bot-config-schema.js';
import { loadBotConfig } from '../../../src/runtime/config/load-bot-config.js';
import { botConfigSchema } from '../../../src/runtime/config/render-bot-config-schema.js';

type Node = { [key: string]: unknown };

/** Every described key of the published schema with a scalar `default`, by path. */
function describedDefaults(node: unknown, path: string, out: Map<string, [string, unknown]>) {
  if (node === null || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const n of node) describedDefaults(n, path, out);
    return out;
  }
  const n = node as Node;
  if (typeof n.description === 'string' && n.default !== undefined && typeof n.default !== 'object')
    out.set(path, [n.description, n.default]);
  for (const [key, value] of Object.entries(n)) {
    if (key === 'properties') {
      for (const [k, v] of Object.entries(value as Node))
        describedDefaults(v, path === '' ? k : `${path}.${k}`, out);
    } else if (key !== 'default' && key !== 'description') {
      describedDefaults(value, path, out);
    }
  }
  return out;
}

describe('the config defaults come from DEFAULTS', () => {
  it('renders every default of the table, durations as text', () => {
    const d = BOT_CONFIG_DEFAULTS;
    expect(parseDuration(d.pingInterval)).toBe(DEFAULTS.ledger.pingIntervalMs);
    expect(parseDuration(d.retention)).toBe(DEFAULTS.retentionMs);
    expect(parseDuration(d.completionTimeout)).toBe(DEFAULTS.submission.completionTimeoutMs);
    expect(parseDuration(d.dedupFallback)).toBe(DEFAULTS.submission.dedupFallbackMs);
    expect({
      maxAttempts: d.retry.maxAttempts,
      initialDelayMs: parseDuration(d.retry.initialDelay),
      maxDelayMs: parseDuration(d.retry.maxDelay),
      deadlineMs: parseDuration(d.retry.deadline),
    }).toEqual(DEFAULTS.retry);
    expect([d.maxInFlight, d.httpHost, d.readyMaxLag, d.logLevel, d.apiVersion]).toEqual([
      DEFAULTS.submission.maxInFlight,
      DEFAULTS.ops.host,
      DEFAULTS.ops.readyMaxLag,
      DEFAULTS.logLevel,
      DEFAULTS.ledger.apiVersion,
    ]);
    expect([d.stateDir, d.testsDir, d.start]).toEqual([
      DEFAULTS.stateDir,
      DEFAULTS.testsDir,
      DEFAULTS.start,
    ]);
  });

  it('a minimal config loads with the numbers of DEFAULTS', () => {
    const config = loadBotConfig({
      path: '/b/bot.config.yaml',
      text: 'ledger:\n  url: http://127.0.0.1:7575\n  userId: bot\nrules: rules/\n',
    });
    expect(config.submission).toEqual({
      maxInFlight: DEFAULTS.submission.maxInFlight,
      completionTimeoutMs: DEFAULTS.submission.completionTimeoutMs,
      retry: DEFAULTS.retry,
      dedup: { mode: 'offset', fallbackMs: DEFAULTS.submission.dedupFallbackMs },
    });
    expect(config.ledger.pingIntervalMs).toBe(DEFAULTS.ledger.pingIntervalMs);
    expect(config.state.retentionMs).toBe(DEFAULTS.retentionMs);
    expect(config.log.level).toBe(DEFAULTS.logLevel);
  });

  it('a description that names a default names the schema default', () => {
    const described = describedDefaults(botConfigSchema(), '', new Map());
    const checked = [...described].filter(([, [text]]) => /\bdefault\b/.test(text));
    expect(checked.map(([path]) => path)).toEqual(
      expect.arrayContaining([
        'submission.maxInFlight',
        'submission.retry.maxAttempts',
        'submission.retry.deadline',
        'http.readyMaxLag',
        'http.readOnly',
        'state.retention',
      ]),
    );
    for (const [path, [text, value]] of checked) {
      expect(`${path}: ${text}`).toContain(`default ${String(value)}`);
    }
  });

  it('says that submission.retry is the default retry of every rule that states none', () => {
    const schema = botConfigSchema() as Node;
    const submission = (schema.properties as Node).submission as Node;
    const retry = (submission.properties as Node).retry as Node;
    expect(retry.description).toMatch(/every rule that states none/);
  });
});
