import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The slow tests: `npm run test:slow` (CI runs it after `npm test`). They are left out of the
 * default config, which `npm test` uses. One file at a time, with generous limits: packing builds
 * the sources and installing compiles better-sqlite3.
 */
// eslint-disable-next-line no-restricted-syntax -- vitest reads the config's default export
export default defineConfig({
  root: resolve(import.meta.dirname, '../..'),
  test: {
    include: ['test/slow/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
