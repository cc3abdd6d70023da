import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NON_COUNTER_TOTALS } from '../../src/runtime/ops/ops-metrics.js';
import { TestScope } from '../support/test-scope.js';
import {
  allTerminal,
  issueInvoices,
  loadFixtureRules,
  startBotOps,
  startInProcessBot,
  startTestLedger,
  waitFor,
} from './harness.js';

// `curl /metrics | promtool check metrics` must pass: Prometheus tooling (and recording rules
// that follow its conventions) read a name ending in `_total` as a counter.
//
// promtool comes from Debian's `prometheus` package. Without it the promtool check is skipped
// with its reason, unless LEDGERBOT_REQUIRE_PROMTOOL=1, which makes a missing promtool a failure
// (CI sets it after installing the package). The pure-TS `_total` check always runs.

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const havePromtool = promtool.error === undefined && promtool.status === 0;
const requirePromtool = process.env.LEDGERBOT_REQUIRE_PROMTOOL === '1';
const NO_PROMTOOL = 'promtool is not installed (apt-get install prometheus)';

// The sandbox, the bot and its ops server of every test here; closed afterAll.
const scope = new TestScope();
let text: string;

beforeAll(async () => {
  const ledger = scope.own(await startTestLedger(7319));
  const dir = scope.tempDir('ledgerbot-metrics-');
  const bot = scope.own(
    await startInProcessBot(ledger, {
      stateDir: join(dir, 'state'),
      seed: 1,
      rules: loadFixtureRules(ledger.parties),
      start: { kind: 'ledger-end' },
    }),
  );
  const ops = scope.own(await startBotOps(bot, { processMetrics: true }));
  // Some traffic, so the per-rule counters and the histograms have samples.
  await issueInvoices(ledger, [{ reference: 'PROM-1', amount: '10.00', currency: 'USD' }]);
  await waitFor(
    () => bot.states(),
    (s) => s.succeeded + s.duplicate >= 1 && allTerminal(s),
    20_000,
    'an intent to finish',
  );
  const res = await fetch(`${ops.url}/metrics`);
  expect(res.status).toBe(200);
  text = await res.text();
}, 60_000);

afterAll(() => scope.close());

/** `# TYPE name type` lines of a Prometheus text exposition. */
function metricTypes(exposition: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1]!, m[2]!);
  return types;
}

describe('/metrics follows the Prometheus naming conventions', () => {
  it('names no gauge, histogram or summary `…_total`', () => {
    const types = metricTypes(text);
    expect(types.size).toBeGreaterThan(20);
    expect(types.get('ledgerbot_intents_total')).toBe('counter');
    expect(types.get('ledgerbot_process_cpu_user_seconds_total')).toBe('counter');
    const bad = [...types].filter(([name, type]) => type !== 'counter' && name.endsWith('_total'));
    expect(bad).toEqual([]);
    // The by-type gauges those `_total` sums were computed from are still there.
    for (const name of NON_COUNTER_TOTALS) {
      expect(types.has(name)).toBe(false);
      expect(types.get(name.replace(/_total$/, ''))).toBe('gauge');
    }
  });

  it.skipIf(!havePromtool && !requirePromtool)(
    `passes \`promtool check metrics\`${havePromtool ? '' : requirePromtool ? ` (required, but ${NO_PROMTOOL})` : ` (skipped: ${NO_PROMTOOL})`}`,
    () => {
      expect(havePromtool, `LEDGERBOT_REQUIRE_PROMTOOL=1 but ${NO_PROMTOOL}`).toBe(true);
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(`${check.stdout}${check.stderr}`.trim()).toBe('');
      expect(check.status).toBe(0);
    },
  );
});
