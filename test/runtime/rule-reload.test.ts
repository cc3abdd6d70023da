import { afterEach, describe, expect, it } from 'vitest';
import type { RuleSet } from '../../src/rules/compiled-rule.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import type { BotState } from '../../src/runtime/bot-events.js';
import { reloadRules } from '../../src/runtime/rule-reload.js';
import type { RuleSetDiff } from '../../src/runtime/rule-set-diff.js';
import { ACCEPT_RULES, ISSUER, PARTIES, PAYER, rules, SETTLE_RULE } from './bot-fixture.js';
import { partsFixture, type PartsFixture } from './parts-fixture.js';

const WITH_ISSUER = `${ACCEPT_RULES}${SETTLE_RULE}`;

const SCHEDULED = `${ACCEPT_RULES}  - id: nightly
    schedule: { cron: '0 2 * * *' }
    then:
      - create: { template: '#invoices:Invoice:Note', createArguments: { owner: '\${{ parties.payer }}' } }
        actAs: [payer]
`;

let f: PartsFixture | undefined;
afterEach(() => {
  f?.cleanup();
  f = undefined;
});

/** reloadRules over the fixture's rule book, with every collaborator recording its calls. */
function reload(fx: PartsFixture, state: BotState = 'running') {
  const calls = {
    resubscribed: 0,
    widened: [] as (readonly string[])[],
    swapped: [] as RuleSet[],
    forgotten: [] as string[],
    diffs: [] as RuleSetDiff[],
  };
  fx.events.on('reload', (d) => calls.diffs.push(d));
  const run = (ruleSet: RuleSet): RuleSetDiff =>
    reloadRules(ruleSet, {
      book: fx.book,
      state: () => state,
      checkpoint: fx.checkpoint,
      updates: { resubscribe: () => (calls.resubscribed += 1) },
      completions: { widen: (parties) => calls.widened.push(parties) },
      schedules: { swap: (r) => calls.swapped.push(r) },
      rateLimits: { forget: (ids) => calls.forgotten.push(...ids) },
      metrics: fx.metrics,
      logger: fx.logger,
      events: fx.events,
    });
  return { run, calls };
}

describe('reloadRules', () => {
  it('swaps the rules; a new filter resubscribes and new acting parties reopen the completions', () => {
    f = partsFixture();
    const { run, calls } = reload(f);
    f.checkpoint.evaluatedThrough = 30;
    const next = rules(WITH_ISSUER);
    const diff = run(next);
    expect(f.book.rules).toBe(next);
    expect(f.book.plan.readParties).toEqual([PAYER, ISSUER].sort());
    expect(diff.added.map((v) => v.id)).toEqual(['settle']);
    expect(diff.unchanged).toBe(1);
    expect(calls.resubscribed).toBe(1);
    expect(calls.widened).toEqual([[PAYER, ISSUER].sort()]);
    expect(calls.swapped).toEqual([]);
    expect(calls.diffs).toEqual([diff]);
    expect(f.metrics.reloads.applied).toBe(1);
    expect(f.logger.lines.find((l) => l.msg === 'rules reloaded')?.fields).toMatchObject({
      offset: 30,
      added: [expect.stringMatching(/^settle@1#/)],
    });
  });

  it('the same rules again: no change, no resubscription', () => {
    f = partsFixture();
    const { run, calls } = reload(f);
    const diff = run(rules());
    expect(diff).toMatchObject({ added: [], removed: [], changed: [], unchanged: 1 });
    expect(calls.resubscribed).toBe(0);
    expect(f.logger.lines.some((l) => l.msg === 'rules reloaded: no change')).toBe(true);
  });

  it('changed and removed rules start their rate limits afresh; a removed paused rule is no longer held for', () => {
    f = partsFixture({ rules: rules(WITH_ISSUER) });
    const { run, calls } = reload(f);
    f.book.pause('settle', { since: 0, offset: 5, resuming: false });
    const changed = rules(ACCEPT_RULES.replace('concurrency: 8', 'concurrency: 4'));
    const diff = run(changed);
    expect(diff.changed.map((v) => v.id)).toEqual(['accept']);
    expect(diff.removed.map((v) => v.id)).toEqual(['settle']);
    expect(calls.forgotten.sort()).toEqual(['accept', 'settle']);
    expect(f.book.heldAt()).toBeUndefined();
  });

  it('changed schedule rules swap the schedule driver', () => {
    f = partsFixture();
    const { run, calls } = reload(f);
    const next = rules(SCHEDULED);
    run(next);
    expect(calls.swapped).toEqual([next]);
    run(rules(SCHEDULED));
    expect(calls.swapped).toHaveLength(1);
  });

  it('before start the rules are replaced: no stream touched, no reload counted or announced', () => {
    f = partsFixture();
    const { run, calls } = reload(f, 'created');
    const next = rules(WITH_ISSUER);
    const diff = run(next);
    expect(f.book.rules).toBe(next);
    // Made when read (nothing reads it at start), as the same diff a reload would report.
    expect({ ...diff }).toEqual({
      added: [expect.objectContaining({ id: 'settle', revision: 1 })],
      removed: [],
      changed: [],
      unchanged: 1,
    });
    expect(calls.resubscribed).toBe(0);
    expect(calls.widened).toEqual([]);
    expect(calls.diffs).toEqual([]);
    expect(f.metrics.reloads.applied).toBe(0);
    expect(f.logger.lines.some((l) => l.msg.startsWith('rules reloaded'))).toBe(false);
    const scheduled = rules(SCHEDULED);
    run(scheduled);
    expect(calls.swapped).toEqual([scheduled]);
  });

  it('refuses an unknown party and keeps the old rules; refuses any reload once stopping', () => {
    f = partsFixture();
    const before = f.book.rules;
    const { run } = reload(f);
    // Rules written for a party the bot has no id for (loaded with another config's parties).
    const auditor = loadRulesOrThrow(
      [{ path: 'rules.yaml', text: WITH_ISSUER.replace(/issuer\]/, 'auditor]') }],
      { parties: { ...PARTIES, auditor: 'auditor::1220' } },
    );
    expect(() => run(auditor)).toThrow(expect.objectContaining({ code: 'UNKNOWN_PARTY' }));
    expect(f.book.rules).toBe(before);
    expect(f.metrics.reloads.applied).toBe(0);
    const stopping = reload(f, 'stopping');
    expect(() => stopping.run(rules())).toThrow(expect.objectContaining({ code: 'NOT_RUNNING' }));
  });
});
