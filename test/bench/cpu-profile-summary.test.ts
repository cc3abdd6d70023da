import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  mainThreadProfile,
  selfTimeByArea,
  topSelfTime,
  type Profile,
} from '../../bench/cpu-profile-summary.js';
import { tempDir } from '../support/temp-dir.js';

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

it("picks the main thread's profile among those node --cpu-prof wrote, one per thread", () => {
  const { dir, cleanup } = tempDir();
  try {
    expect(mainThreadProfile(dir)).toBeUndefined();
    // A worker's (thread id 1) first, as a directory may list it.
    for (const name of ['CPU.20261127.110113.17233.1.002.cpuprofile', 'notes.txt'])
      writeFileSync(join(dir, name), '{}');
    expect(mainThreadProfile(dir)).toBeUndefined();
    writeFileSync(join(dir, 'CPU.20261127.110113.17233.0.001.cpuprofile'), '{}');
    expect(mainThreadProfile(dir)).toBe(join(dir, 'CPU.20261127.110113.17233.0.001.cpuprofile'));
  } finally {
    cleanup();
  }
});
