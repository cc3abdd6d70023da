import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type TempDir = { readonly dir: string; cleanup(): void };

/** A fresh directory under the OS temp dir, and the function that removes it. */
export function tempDir(prefix = 'ledgerbot-it-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
