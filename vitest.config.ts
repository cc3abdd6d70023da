import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow tests (npm pack + install, minutes) run with `npm run test:slow`.
    exclude: [...configDefaults.exclude, 'test/slow/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
