import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Writes `text` to `file` so that a reader sees the old file or the new one, never a part: to a
 * temporary name in the same directory (made if missing), then renamed over `file`. Throws the
 * file system's error (an unwritable directory, a full disk) after removing the temporary file.
 */
export function writeFileAtomically(file: string, text: string): void {
  const temp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(temp, text, { flag: 'wx' });
    renameSync(temp, file);
  } catch (err) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The directory itself could not be made: there is no temporary file.
    }
    throw err;
  }
}
