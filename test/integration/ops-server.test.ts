import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpsServer } from '../../src/runtime/ops/ops-server.js';
import {
  allTerminal,
  AUDIT_RULE_FEW_RETRIES,
  countContracts,
  issueInvoices,
  loadFixtureRules,
  RULES_DIR,
  startBotOps,
  startInProcessBot,
  startTestLedger,
  waitFor,
  type InProcessBot,
  type TestLedger,
} from './harness.js';
import { TestScope, withScope } from '../support/test-scope.js';

const TOKEN = 'ops-token-7f3a9c';

let ledger: TestLedger;
const suite = new TestScope();
let tmp: string;
let n = 0;

beforeAll(async () => {
  ledger = suite.own(await startTestLedger(7301));
  tmp = suite.tempDir('ledgerbot-ops-');
}, 30_000);

afterAll(() => suite.close());

type Running = { bot: InProcessBot; ops: OpsServer };

/** A bot on the sandbox with its ops API, both stopped when `scope` closes (the API first). */
async function run(
  scope: TestScope,
  options: { rulesText?: string; token?: string; readyMaxLag?: number } = {},
): Promise<Running> {
  n += 1;
  const stateDir = join(tmp, `state-${n}`);
  let rules = loadFixtureRules(ledger.parties);
  if (options.rulesText !== undefined) {
    const dir = join(tmp, `rules-${n}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'rules.yaml'), options.rulesText);
    rules = loadFixtureRules(ledger.parties, dir);
  }
  const bot = scope.own(
    await startInProcessBot(ledger, {
      stateDir,
      seed: n,
      rules,
      start: { kind: 'ledger-end' },
    }),
  );
  const ops = scope.own(
    await startBotOps(bot, {
      processMetrics: n === 1,
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.readyMaxLag === undefined ? {} : { readyMaxLag: options.readyMaxLag }),
    }),
  );
  return { bot, ops };
}

async function call(
  ops: OpsServer,
  method: string,
  path: string,
  token?: string,
): Promise<{ status: number; text: string; json: () => unknown; headers: Headers }> {
  const res = await fetch(`${ops.url}${path}`, {
    method,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    json: () => JSON.parse(text) as unknown,
    headers: res.headers,
  };
}

/** Waits until the bot has processed up to the ledger end and has nothing open. */
async function settled(r: Running): Promise<void> {
  await waitFor(
    async () => ({
      end: await ledger.client.ledgerEnd(),
      processed: r.bot.bot.processedOffset() ?? -1,
      states: r.bot.states(),
    }),
    (s) => s.processed >= s.end && allTerminal(s.states) && r.bot.bot.metrics.inFlight === 0,
    20_000,
    'the bot to catch up',
  );
}

/** `name{labels} value` lines of the Prometheus text, checked for the format on the way. */
function parseMetrics(
  text: string,
): { name: string; labels: Record<string, string>; value: number }[] {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    // prom-client writes NaN as "Nan" (an event-loop gauge before its first sample); Prometheus
    // reads values with Go's ParseFloat, which takes NaN and Inf in any case.
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|nan|[+-]inf)$/i.exec(line);
    if (m === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!;
    }
    const raw = m[3]!.toLowerCase();
    const value = raw.endsWith('inf') ? (raw.startsWith('-') ? -Infinity : Infinity) : Number(raw);
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/**
 * One dead letter of the audit rule: the rule is paused while the invoice is issued (the driver
 * does not retry, so it must not meet the fault), then resumed while every submission fails.
 */
async function deadLetter(r: Running, reference: string): Promise<void> {
  r.bot.bot.pauseRule('audit-invoices');
  await issueInvoices(ledger, [{ reference, amount: '10.00', currency: 'USD' }]);
  await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
  try {
    r.bot.bot.resumeRule('audit-invoices');
    await waitFor(
      () => r.bot.states(),
      (s) => s['dead-lettered'] === 1,
      20_000,
      'a dead letter',
    );
  } finally {
    await ledger.clearFaults();
  }
}

describe('the ops endpoints against a bot on the sandbox', () => {
  it(
    'answers health, readiness, status and metrics, with the token where needed',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { token: TOKEN });
        expect((await call(r.ops, 'GET', '/livez')).status).toBe(200);
        await waitFor(
          () => call(r.ops, 'GET', '/readyz'),
          (x) => x.status === 200,
          10_000,
          'ready',
        );
        await issueInvoices(ledger, [
          { reference: 'OPS-1', amount: '10.00', currency: 'USD' },
          { reference: 'OPS-2', amount: '5000.00', currency: 'USD' },
        ]);
        await settled(r);

        // Without the token, or with a wrong one: 401; /livez, /readyz, /metrics are open.
        const denied = await call(r.ops, 'GET', '/status');
        expect(denied.status).toBe(401);
        expect(denied.headers.get('www-authenticate')).toBe('Bearer');
        expect((denied.json() as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
        expect((await call(r.ops, 'GET', '/status', `${TOKEN}x`)).status).toBe(401);
        expect((await call(r.ops, 'POST', '/rules/audit-invoices/pause')).status).toBe(401);
        expect((await call(r.ops, 'GET', '/dead-letters')).status).toBe(401);

        const status = await call(r.ops, 'GET', '/status', TOKEN);
        expect(status.status).toBe(200);
        const body = status.json() as Record<string, unknown>;
        expect(body).toMatchObject({
          state: 'running',
          shadow: false,
          stream: { connected: true },
          inFlight: 0,
          deadLetters: 0,
          lag: 0,
        });
        expect(body.checkpoint).toEqual(expect.any(Number));
        const rules = body.rules as { id: string; state: string; trigger: string }[];
        expect(rules.map((x) => `${x.id}:${x.state}:${x.trigger}`).sort()).toEqual([
          'accept-small-invoices:active:created',
          'audit-invoices:active:created',
          'settle-accepted-invoices:active:exercised',
        ]);
        const recent = body.recentIntents as { ruleId: string; state: string }[];
        // OPS-1: audit + accept + settle; OPS-2: audit only.
        expect(recent).toHaveLength(4);
        expect(recent.every((i) => i.state === 'succeeded' || i.state === 'duplicate')).toBe(true);

        const metrics = await call(r.ops, 'GET', '/metrics');
        expect(metrics.status).toBe(200);
        expect(metrics.headers.get('content-type')).toContain('text/plain');
        const samples = parseMetrics(metrics.text);
        const value = (name: string, labels: Record<string, string> = {}): number | undefined =>
          samples.find(
            (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
          )?.value;
        expect(value('ledgerbot_rule_events_matched_total', { rule: 'audit-invoices' })).toBe(2);
        expect(
          value('ledgerbot_rule_events_matched_total', { rule: 'accept-small-invoices' }),
        ).toBe(2);
        expect(
          value('ledgerbot_rule_conditions_false_total', { rule: 'accept-small-invoices' }),
        ).toBe(1);
        expect(
          value('ledgerbot_intents_total', { rule: 'audit-invoices', state: 'succeeded' })! +
            value('ledgerbot_intents_total', { rule: 'audit-invoices', state: 'duplicate' })!,
        ).toBe(2);
        expect(
          value('ledgerbot_event_to_completion_seconds_count', { rule: 'audit-invoices' }),
        ).toBe(2);
        expect(
          value('ledgerbot_event_to_submit_seconds_count', { rule: 'settle-accepted-invoices' }),
        ).toBe(1);
        expect(value('ledgerbot_in_flight')).toBe(0);
        expect(value('ledgerbot_stream_connected')).toBe(1);
        expect(value('ledgerbot_stream_lag_offsets')).toBe(0);
        expect(value('ledgerbot_dead_letter_depth')).toBe(0);
        expect(value('ledgerbot_store_intents', { state: 'succeeded' })).toEqual(
          expect.any(Number),
        );
        expect(value('ledgerbot_checkpoint_offset')).toEqual(expect.any(Number));
        expect(value('ledgerbot_process_cpu_user_seconds_total')).toEqual(expect.any(Number));
        // Bounded labels: no contract ids, command ids or party ids anywhere.
        const labelNames = new Set(samples.flatMap((s) => Object.keys(s.labels)));
        for (const l of labelNames) {
          expect([
            'rule',
            'state',
            'stream',
            'result',
            'le',
            'version',
            'major',
            'minor',
            'patch',
            'space',
            'kind',
            'type',
          ]).toContain(l);
        }
        const labelValues = samples.flatMap((s) => Object.values(s.labels));
        expect(
          labelValues.filter(
            (v) => v.startsWith('lb-') || v.includes('::') || /^00[0-9a-f]{20,}/.test(v),
          ),
        ).toEqual([]);

        expect((await call(r.ops, 'GET', '/nope', TOKEN)).status).toBe(404);
        const wrongMethod = await call(r.ops, 'DELETE', '/status', TOKEN);
        expect(wrongMethod.status).toBe(405);
        expect(wrongMethod.headers.get('allow')).toBe('GET');
        expect((await call(r.ops, 'POST', '/rules/no-such-rule/pause', TOKEN)).status).toBe(404);
        expect((await call(r.ops, 'GET', '/dead-letters?limit=0', TOKEN)).status).toBe(400);
      }),
    60_000,
  );

  it(
    'pauses a rule and, once resumed, evaluates the events of the pause: nothing lost, nothing twice',
    () =>
      withScope(async (scope) => {
        const r = await run(scope);
        const before = await countContracts(ledger);
        const paused = await call(r.ops, 'POST', '/rules/audit-invoices/pause');
        expect(paused.status).toBe(200);
        const rule = (paused.json() as { rule: { state: string; pausedAtOffset: number } }).rule;
        expect(rule.state).toBe('paused');
        // Idempotent.
        expect((await call(r.ops, 'POST', '/rules/audit-invoices/pause')).status).toBe(200);
        const plan = Array.from({ length: 6 }, (_, i) => ({
          reference: `P-${i}`,
          amount: `${10 + i}.00`,
          currency: 'USD',
        }));
        await issueInvoices(ledger, plan);
        await settled(r);
        // The other rules kept working; the paused one did nothing, and the checkpoint waited.
        const during = await countContracts(ledger);
        expect(during.receipts - before.receipts).toBe(6);
        expect(during.seen - before.seen).toBe(0);
        expect(r.bot.bot.checkpoint()).toBeLessThanOrEqual(rule.pausedAtOffset);
        const metrics = parseMetrics((await call(r.ops, 'GET', '/metrics')).text);
        expect(
          metrics.find(
            (s) => s.name === 'ledgerbot_rule_paused' && s.labels.rule === 'audit-invoices',
          )?.value,
        ).toBe(1);

        const resumed = await call(r.ops, 'POST', '/rules/audit-invoices/resume');
        expect(resumed.status).toBe(200);
        const after = await waitFor(
          () => countContracts(ledger),
          (c) => c.seen - before.seen >= 6 || c.duplicates.length > 0,
          20_000,
          'six audit records',
        );
        expect(after.duplicates).toEqual([]);
        expect(after.seen - before.seen).toBe(6);
        await waitFor(
          () => r.bot.bot.ruleStatus().find((x) => x.id === 'audit-invoices')?.state,
          (s) => s === 'active',
          10_000,
          'the rule active again',
        );
        await settled(r);
        // The hold is released: the checkpoint moves past the pause.
        await waitFor(
          async () => ({ cp: r.bot.bot.checkpoint() ?? -1, end: await ledger.client.ledgerEnd() }),
          (x) => x.cp > rule.pausedAtOffset,
          10_000,
          'the checkpoint past the pause',
        );
        expect((await countContracts(ledger)).seen - before.seen).toBe(6);
      }),
    60_000,
  );

  it(
    'retries a dead letter under the same commandId, and it lands once',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { rulesText: AUDIT_RULE_FEW_RETRIES });
        const before = await countContracts(ledger);
        await deadLetter(r, 'DL-1');
        const list = await call(r.ops, 'GET', '/dead-letters');
        const letters = (
          list.json() as {
            deadLetters: {
              commandId: string;
              ruleId: string;
              attempts: number;
              trigger: { kind: string };
            }[];
          }
        ).deadLetters;
        expect(letters).toHaveLength(1);
        const letter = letters[0]!;
        expect(letter).toMatchObject({
          ruleId: 'audit-invoices',
          attempts: 2,
          trigger: { kind: 'event' },
        });
        const shown = await call(
          r.ops,
          'GET',
          `/dead-letters/${encodeURIComponent(letter.commandId)}`,
        );
        expect(shown.status).toBe(200);
        expect(
          (shown.json() as { deadLetter: { payload: unknown; error: { code: string } } })
            .deadLetter,
        ).toMatchObject({ commandId: letter.commandId, error: { code: 'SEQUENCER_BACKPRESSURE' } });

        const retried = await call(r.ops, 'POST', `/dead-letters/${letter.commandId}/retry`);
        expect(retried.status).toBe(202);
        expect(retried.json()).toEqual({
          intent: {
            commandId: letter.commandId,
            ruleId: 'audit-invoices',
            state: 'pending',
            attempts: 0,
          },
        });
        await settled(r);
        expect(r.bot.store.getIntent(letter.commandId)?.state).toMatch(/^(succeeded|duplicate)$/);
        const after = await countContracts(ledger);
        expect(after.seen - before.seen).toBe(1);
        expect(after.duplicates).toEqual([]);
        expect((await call(r.ops, 'GET', '/dead-letters')).json()).toEqual({ deadLetters: [] });
        // A second retry finds nothing to retry.
        expect((await call(r.ops, 'POST', `/dead-letters/${letter.commandId}/retry`)).status).toBe(
          404,
        );
      }),
    60_000,
  );

  it(
    'drops a dead letter for good',
    () =>
      withScope(async (scope) => {
        const r = await run(scope, { rulesText: AUDIT_RULE_FEW_RETRIES });
        await deadLetter(r, 'DL-2');
        const id = r.bot.store.listDeadLetters()[0]!.intent.commandId;
        const dropped = await call(r.ops, 'DELETE', `/dead-letters/${id}`);
        expect(dropped.status).toBe(200);
        expect(dropped.json()).toEqual({ deleted: true });
        expect(r.bot.store.getIntent(id)).toBeUndefined();
        expect((await call(r.ops, 'DELETE', `/dead-letters/${id}`)).status).toBe(404);
      }),
    60_000,
  );

  it(
    'is not ready while the updates stream is down, and ready again once it is back',
    () =>
      withScope(async (scope) => {
        const r = await run(scope);
        scope.defer(undefined, () => ledger.clearFaults());
        const ready = (): Promise<Awaited<ReturnType<typeof call>>> =>
          call(r.ops, 'GET', '/readyz');
        const sample = async (name: string): Promise<number | undefined> =>
          parseMetrics((await call(r.ops, 'GET', '/metrics')).text).find((s) => s.name === name)
            ?.value;
        await waitFor(ready, (x) => x.status === 200, 10_000, 'ready');
        expect(await sample('ledgerbot_stream_connected')).toBe(1);
        const reconnects = r.bot.bot.metrics.reconnects.updates;
        // The participant drops the streams and refuses new ones until the fault is cleared: the
        // bot cannot get back in, however fast it reconnects.
        await ledger.faults({ refuseStreams: true });
        const down = await waitFor(ready, (x) => x.status === 503, 10_000, 'not ready');
        // Why, once a failure said so (the drop itself may come first).
        expect(down.text).toMatch(/^updates stream disconnected(: .+)?\n$/);
        expect(down.headers.get('content-type')).toContain('text/plain');
        expect((await call(r.ops, 'GET', '/livez')).status).toBe(200);
        // Still down after the bot tried again twice: the state is the socket's, not the traffic's.
        await waitFor(
          () => r.bot.bot.metrics.reconnects.updates,
          (k) => k >= reconnects + 2,
          15_000,
          'two reconnect attempts',
        );
        const still = await ready();
        expect(still.status).toBe(503);
        // The refused reconnects say why: the sandbox's refusal, as the client read it.
        expect(still.text).toMatch(/^updates stream disconnected: .*\/v2\/updates.*\n$/);
        expect(await sample('ledgerbot_stream_connected')).toBe(0);
        expect(await sample('ledgerbot_completions_stream_connected')).toBe(0);

        await ledger.clearFaults();
        await waitFor(ready, (x) => x.status === 200, 15_000, 'ready again');
        expect(await sample('ledgerbot_stream_connected')).toBe(1);
        // ... and it works again: an invoice issued now is audited.
        const before = await countContracts(ledger);
        await issueInvoices(ledger, [{ reference: 'RZ-1', amount: '5000.00', currency: 'CHF' }]);
        await waitFor(
          () => countContracts(ledger),
          (c) => c.seen - before.seen === 1,
          15_000,
          'RZ-1 audited',
        );
      }),
    60_000,
  );

  it(
    'is not ready while the lag exceeds its bound, with the lag in the reason',
    () =>
      withScope(async (scope) => {
        // One audit submission per 1000 s, one at a time: the second invoice's intent holds the
        // rule's only place while it waits for a token, so the third one stops the ingestion
        // (backpressure) while the ledger moves on.
        const throttled = AUDIT_RULE_FEW_RETRIES.replace(
          'deadline: 2m }\n',
          'deadline: 2m }\n    rateLimit: { perSecond: 0.001, burst: 1 }\n    concurrency: 1\n',
        );
        expect(throttled).not.toBe(AUDIT_RULE_FEW_RETRIES);
        const r = await run(scope, { rulesText: throttled, readyMaxLag: 1 });
        const ready = (): Promise<Awaited<ReturnType<typeof call>>> =>
          call(r.ops, 'GET', '/readyz');
        await waitFor(ready, (x) => x.status === 200, 10_000, 'ready');
        await issueInvoices(
          ledger,
          Array.from({ length: 5 }, (_, i) => ({
            reference: `LAG-${i}`,
            amount: '10.00',
            currency: 'USD',
          })),
        );
        const down = await waitFor(ready, (x) => x.status === 503, 10_000, 'not ready');
        const m = /^lag (\d+) > 1\n$/.exec(down.text);
        expect(m, down.text).not.toBeNull();
        // At least the three invoices after the one waiting for its token are not processed.
        expect(Number(m![1])).toBeGreaterThanOrEqual(3);
        // Connected all along, and alive: only the readiness says "behind".
        expect(r.bot.bot.metrics.updatesConnected).toBe(true);
        expect((await call(r.ops, 'GET', '/livez')).status).toBe(200);
        const status = (await call(r.ops, 'GET', '/status')).json() as {
          stream: { connected: boolean };
          lag: number;
          ledgerEnd: number;
          processedOffset: number;
        };
        expect(status.stream.connected).toBe(true);
        expect(status.lag).toBe(status.ledgerEnd - status.processedOffset);
        expect(status.lag).toBeGreaterThanOrEqual(3);
      }),
    60_000,
  );

  it(
    'fails /livez and /readyz once the bot has stopped',
    () =>
      withScope(async (scope) => {
        const r = await run(scope);
        await r.bot.bot.stop();
        const res = await call(r.ops, 'GET', '/readyz');
        expect(res.status).toBe(503);
        expect(res.text).toBe('bot is stopped\n');
        expect((await call(r.ops, 'GET', '/livez')).status).toBe(503);
      }),
    30_000,
  );
});

describe('shadow mode', () => {
  it('evaluates and reports intents but submits and stores nothing', async () => {
    n += 1;
    const stateDir = join(tmp, `state-${n}`);
    await withScope(async (scope) => {
      const bot = scope.own(
        await startInProcessBot(ledger, {
          stateDir,
          seed: n,
          rules: loadFixtureRules(ledger.parties, RULES_DIR),
          start: { kind: 'ledger-end' },
          shadow: true,
        }),
      );
      const shadowed: string[] = [];
      bot.bot.events.on('shadow-intent', (i) => shadowed.push(i.ruleId));
      const before = await countContracts(ledger);
      const completionsBefore = await ledger.client.ledgerEnd();
      await issueInvoices(ledger, [
        { reference: 'SH-1', amount: '10.00', currency: 'USD' },
        { reference: 'SH-2', amount: '20.00', currency: 'USD' },
      ]);
      await waitFor(
        () => shadowed.length,
        (k) => k >= 4,
        10_000,
        'four shadow intents',
      );
      await waitFor(
        async () => ({ end: await ledger.client.ledgerEnd(), p: bot.bot.processedOffset() ?? -1 }),
        (x) => x.p >= x.end,
        10_000,
        'caught up',
      );
      expect(shadowed.sort()).toEqual([
        'accept-small-invoices',
        'accept-small-invoices',
        'audit-invoices',
        'audit-invoices',
      ]);
      expect(bot.submitOutcomes.size).toBe(0);
      expect(bot.bot.metrics.snapshot().submissions).toBe(0);
      expect(bot.bot.metrics.snapshot().shadowIntents).toBe(4);
      const after = await countContracts(ledger);
      expect(after.seen).toBe(before.seen);
      expect(after.receipts).toBe(before.receipts);
      // Only the driver's two creates moved the ledger.
      expect((await ledger.client.ledgerEnd()) - completionsBefore).toBe(2);
      expect(bot.store.listIntents()).toEqual([]);
      expect(bot.store.checkpoint()).toBeUndefined();
      expect(() => bot.bot.retryDeadLetter('lb-x')).toThrow(/shadow/);
    });
    // Nothing was written on stop either.
    const { openSqliteStore } = await import('../../src/store/open-sqlite-store.js');
    const store = openSqliteStore({ dir: stateDir, readonly: true });
    try {
      expect(store.checkpoint()).toBeUndefined();
    } finally {
      store.close();
    }
  }, 60_000);
});
