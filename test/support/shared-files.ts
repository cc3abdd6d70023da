import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * ../shared, beside the repository: the official specs and NOTES.md, the Daml packages. CI always
 * has it; a user's clone has none. What the tests need from it is generated and committed (the
 * spec bundle of `npm run gen:wire`), so only tests that check a committed file against its source,
 * or read a file that is not committed, need it: they skip without it, saying why in their name.
 *
 * `.ci/run` sets LEDGERBOT_REQUIRE_SHARED=1: then nothing skips, and a missing ../shared fails the
 * run instead of passing it quietly.
 */
export const SHARED_DIR = fileURLToPath(new URL('../../../shared/', import.meta.url));

export const SHARED_LEDGER_API_DIR = `${SHARED_DIR}ledger-api/`;

const required = process.env.LEDGERBOT_REQUIRE_SHARED === '1';

/**
 * Whether a test that reads `relativePath` (under ../shared) must skip: true only when the file is
 * missing and ../shared is not required, and then it says so in one line on the test's output.
 * When it is required and missing, throws, so the test file fails to load with the path in the
 * message.
 */
export function skipWithoutShared(relativePath: string): boolean {
  if (existsSync(SHARED_DIR + relativePath)) return false;
  if (!required) {
    console.warn(`skipped: needs ../shared/${relativePath}, which is not beside this clone`);
  }
  if (required) {
    throw new Error(
      `LEDGERBOT_REQUIRE_SHARED=1 but ${SHARED_DIR}${relativePath} is missing: CI needs ../shared beside the clone`,
    );
  }
  return true;
}
