import { expect, it } from 'vitest';
import { selfTimeByArea, topSelfTime, type Profile } from '../../bench/cpu-profile-summary.js';

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9 });

const profile: Profile = {
  nodes: [
    { id: 1, callFrame: frame('dispatch', '') },
    { id: 2, callFrame: frame('work', 'file:///x/src/rules/work.ts') },
    { id: 3, callFrame: frame('(garbage collector)', '') },
  ],
  samples: [1, 2, 2, 3],
  // The first delta is from the profile's start to its first sample: the profiler starting.
  timeDeltas: [238_000, 1_000, 1_000, 3_000],
};

it('sums the self time of each sample, leaving out the time before the first one', () => {
  expect(topSelfTime(profile)).toEqual([
    { name: '(garbage collector)', ms: 3, percent: 60 },
    { name: 'work (src/rules/work.ts:10)', ms: 2, percent: 40 },
    { name: 'dispatch', ms: 0, percent: 0 },
  ]);
  expect(selfTimeByArea(profile).map((r) => [r.name, r.ms])).toEqual([
    ['(garbage collector)', 3],
    ['ledgerbot rules/', 2],
    ['native dispatch', 0],
  ]);
});
