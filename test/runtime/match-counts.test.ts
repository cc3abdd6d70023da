import { describe, expect, it } from 'vitest';
import { benchRules } from '../../bench/bench-rules.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { indexRules, type RuleIndex } from '../../src/rules/rule-index.js';
import { BotMetrics } from '../../src/runtime/bot-metrics.js';
import { randomEvents } from '../rules/random-events.js';
import { CONTEXT, input, rules } from '../rules/rule-fixtures.js';

/**
 * The bot counts matches in place (BotMetrics.matchCountsFor, evaluate's `matchCounts`): its
 * per-rule metrics must read exactly as one countMatch call per matched rule made them: the same
 * counts, the same rules (only those that matched or erred) in the same order.
 */

const ruleSet = rules(`${benchRules(100, 'ledger-effects')}  - id: broken
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: int(event.createArgument.amount) > 10
    then: [{ exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }, actAs: [payer] }]
`);

/** Feeds `events` to both metrics, by call per rule and in place, each event with `indexOf(i)`. */
function countBoth(
  events: ReturnType<typeof randomEvents>,
  indexOf: (i: number) => RuleIndex,
  byCall: BotMetrics,
  inPlace: BotMetrics,
): number {
  let matched = 0;
  events.forEach((event, i) => {
    const index = indexOf(i);
    let calls = 0;
    const called = evaluate(index, input(event), CONTEXT, {
      countMatch: (ruleId, conditionFalse) => {
        calls += 1;
        byCall.countMatch(ruleId, conditionFalse);
      },
    });
    matched += calls;
    for (const e of called.errors) byCall.countRuleError(e.ruleId);
    const counts = inPlace.matchCountsFor(index);
    const before = counts.total;
    const counted = evaluate(index, input(event), CONTEXT, { matchCounts: counts });
    for (const e of counted.errors) inPlace.countRuleError(e.ruleId);
    expect(counted.intents).toEqual(called.intents);
    expect(counted.errors).toEqual(called.errors);
    expect(counts.total - before).toBe(calls);
  });
  return matched;
}

const rulesJson = (m: BotMetrics): string => JSON.stringify(m.snapshot().rules);

describe('match counts kept in place', () => {
  it('read as one countMatch per matched rule, in the same order, at every snapshot', () => {
    const index = indexRules(ruleSet);
    const byCall = new BotMetrics();
    const inPlace = new BotMetrics();
    const events = randomEvents(11, 800);
    const first = countBoth(events.slice(0, 400), () => index, byCall, inPlace);
    expect(rulesJson(inPlace)).toBe(rulesJson(byCall));
    // A snapshot changes nothing: the next one adds the later counts once.
    const second = countBoth(events.slice(400), () => index, byCall, inPlace);
    expect(rulesJson(inPlace)).toBe(rulesJson(byCall));
    expect(inPlace.matchCountsFor(index).total).toBe(first + second);
    const rulesSeen = Object.values(inPlace.snapshot().rules);
    expect(rulesSeen.reduce((a, r) => a + r.matched, 0)).toBe(first + second);
    expect(rulesSeen.some((r) => r.conditionsFalse > 0 && r.conditionsFalse < r.matched)).toBe(
      true,
    );
    expect(inPlace.snapshot().rules.broken?.errors).toBeGreaterThan(0);
  });

  it('add up over many rule indexes (reloads, replays), the oldest folded into the counters', () => {
    // Fresh indexes of one rule set, more than are kept apart: the oldest are folded.
    const indexes = Array.from({ length: 12 }, () => indexRules(ruleSet, { guards: true }));
    const byCall = new BotMetrics();
    const inPlace = new BotMetrics();
    const events = randomEvents(5, 600);
    const half = events.length / 2;
    countBoth(events.slice(0, half), (i) => indexes[i % 12]!, byCall, inPlace);
    expect(rulesJson(inPlace)).toBe(rulesJson(byCall));
    // Back to indexes whose counts were folded: counted again, not lost or doubled.
    countBoth(events.slice(half), (i) => indexes[(i * 7) % 12]!, byCall, inPlace);
    expect(rulesJson(inPlace)).toBe(rulesJson(byCall));
  });

  it('are refused for another rule index', () => {
    const other = indexRules(rules(benchRules(10, 'ledger-effects')));
    const counts = new BotMetrics().matchCountsFor(other);
    const [event] = randomEvents(3, 1);
    expect(() =>
      evaluate(indexRules(ruleSet), input(event!), CONTEXT, { matchCounts: counts }),
    ).toThrow(/another rule index/);
  });
});
