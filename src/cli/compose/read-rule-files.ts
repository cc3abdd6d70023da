import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { RuleFile } from '../../rules/load-rules.js';
import { UsageError } from '../usage-error.js';

/** Rule test files live beside rules: the `test` command reads them, rule loading skips them. */
const TEST_FILE = /\.test\.ya?ml$/;

/** Whether a path the user named is a directory; a missing one is a usage error. */
export async function isDirectoryPath(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (error) {
    throw new UsageError(`cannot read ${path}: no such file or directory`, { cause: error });
  }
}

/** Reads rule files; a directory gives its *.yaml and *.yml files except *.test.yaml. */
export async function readRuleFiles(paths: readonly string[]): Promise<RuleFile[]> {
  const files: RuleFile[] = [];
  for (const path of paths) {
    const names = (await isDirectoryPath(path))
      ? (await readdir(path))
          .filter((n) => ['.yaml', '.yml'].includes(extname(n)) && !TEST_FILE.test(n))
          .sort()
          .map((n) => join(path, n))
      : [path];
    for (const name of names) files.push({ path: name, text: await readFile(name, 'utf8') });
  }
  return files;
}
