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
    // Vitest's default is one worker fewer than the cores: one on a two-core machine. Most test
    // files spend their time waiting on the processes they start (sandboxes, bots, PostgreSQL,
    // Chromium), so two workers there took the suite from 624 s to 337 s, every test passing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
