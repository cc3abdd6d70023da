import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow tests (npm pack + install, minutes) run with `npm run test:slow`.
    exclude: [...configDefaults.exclude, 'test/slow/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Vitest's default is one worker per core but one, so a 2-core machine (CI's) ran one file at
    // a time while most tests wait on sockets, child processes and timers: two workers there took
    // the suite from about 575 s to 352 s (2026-11-27).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
