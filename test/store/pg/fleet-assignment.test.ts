import { describe, expect, it } from 'vitest';
import { assignRules } from '../../../src/store/pg/fleet-assignment.js';

const rules = (n: number): string[] => Array.from({ length: n }, (_, i) => `rule-${i}`);

function shares(target: Map<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of target.values()) out[m] = (out[m] ?? 0) + 1;
  return out;
}

function moved(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...b].filter(([rule, m]) => a.get(rule) !== m).map(([rule]) => rule);
}

describe('assignRules', () => {
  it('gives every rule to exactly one member, each member ⌊n/m⌋ or ⌈n/m⌉', () => {
    const target = assignRules(['a', 'b', 'c'], rules(100), new Map());
    expect([...target.keys()].sort()).toEqual(rules(100).sort());
    const counts = Object.values(shares(target)).sort();
    expect(counts).toEqual([33, 33, 34]);
  });

  it('is the same whatever the order of its inputs', () => {
    const owners = new Map([
      ['rule-1', 'b'],
      ['rule-7', 'a'],
    ]);
    const one = assignRules(['a', 'b', 'c'], rules(20), owners);
    const two = assignRules(['c', 'a', 'b'], [...rules(20)].reverse(), owners);
    expect([...two].sort()).toEqual([...one].sort());
  });

  it('with no members assigns nothing; with no rules, nothing either', () => {
    expect(assignRules([], rules(5), new Map()).size).toBe(0);
    expect(assignRules(['a'], [], new Map()).size).toBe(0);
  });

  it('moves only the joining member its share when a member joins', () => {
    const before = assignRules(['a', 'b'], rules(60), new Map());
    const after = assignRules(['a', 'b', 'c'], rules(60), before);
    expect(shares(after)).toEqual({ a: 20, b: 20, c: 20 });
    const changed = moved(before, after);
    expect(changed).toHaveLength(20);
    for (const rule of changed) expect(after.get(rule)).toBe('c');
  });

  it("moves only the leaving member's rules when a member leaves, spread over the rest", () => {
    const before = assignRules(['a', 'b', 'c'], rules(60), new Map());
    const after = assignRules(['a', 'b'], rules(60), before);
    expect(shares(after)).toEqual({ a: 30, b: 30 });
    const changed = moved(before, after);
    expect(changed.sort()).toEqual(
      [...before]
        .filter(([, m]) => m === 'c')
        .map(([r]) => r)
        .sort(),
    );
  });

  it('keeps current owners within their fair share and takes the excess from an over-share owner', () => {
    // One member took every rule while it was alone; two more join.
    const owners = new Map(rules(10).map((r) => [r, 'a']));
    const target = assignRules(['a', 'b', 'c'], rules(10), owners);
    expect(shares(target)).toEqual({ a: 4, b: 3, c: 3 });
    // A second round from the new owners changes nothing: the assignment is a fixed point.
    expect(assignRules(['a', 'b', 'c'], rules(10), target)).toEqual(target);
  });

  it('ignores owners that are not live members, and rules that are not asked for', () => {
    const owners = new Map([
      ['rule-0', 'gone'],
      ['old-rule', 'a'],
    ]);
    const target = assignRules(['a', 'b'], rules(2), owners);
    expect([...target.keys()].sort()).toEqual(['rule-0', 'rule-1']);
    expect(new Set(target.values())).toEqual(new Set(['a', 'b']));
  });
});

describe('assignRules while members run different rules', () => {
  it('gives a rule only some members know to one of them, and shares out the rest as usual', () => {
    // b has not had the reload that added rule-new; c has one rule more than the others.
    const knows = new Map([
      ['b', new Set(rules(9))],
      ['c', new Set([...rules(9), 'rule-new', 'c-only'])],
    ]);
    const target = assignRules(['a', 'b', 'c'], [...rules(9), 'rule-new'], new Map(), knows);
    expect(['a', 'c']).toContain(target.get('rule-new'));
    expect(target.has('c-only')).toBe(false); // not a's rule: a leaves it to c's own assignment
    const common = new Map([...target].filter(([rule]) => rule !== 'rule-new'));
    expect(shares(common)).toEqual({ a: 3, b: 3, c: 3 });
  });

  it('leaves a rule only some know with its owner when the owner is one of them', () => {
    const knows = new Map([['b', new Set<string>()]]);
    for (const owner of ['a', 'c']) {
      const target = assignRules(['a', 'b', 'c'], ['x'], new Map([['x', owner]]), knows);
      expect(target.get('x')).toBe(owner);
    }
    // An owner that does not know it (it lost it in a reload) does not keep it.
    const target = assignRules(['a', 'b', 'c'], ['x'], new Map([['x', 'b']]), knows);
    expect(['a', 'c']).toContain(target.get('x'));
  });

  it('agrees between members: each computes the same owner for the rules it knows', () => {
    const aRules = [...rules(6), 'new'];
    const bRules = rules(6);
    const knows = (me: string): Map<string, Set<string>> =>
      me === 'a' ? new Map([['b', new Set(bRules)]]) : new Map([['a', new Set(aRules)]]);
    const byA = assignRules(['a', 'b'], aRules, new Map(), knows('a'));
    const byB = assignRules(['a', 'b'], bRules, new Map(), knows('b'));
    for (const rule of bRules) expect(byB.get(rule)).toBe(byA.get(rule));
    expect(byA.get('new')).toBe('a');
    expect(byB.has('new')).toBe(false);
  });
});
