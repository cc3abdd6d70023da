import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { utf8Text } from '../../core/source/utf8-text.js';
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
    for (const name of names) files.push({ path: name, text: await readUtf8(name) });
  }
  return files;
}

/** A file that must be UTF-8 text (rules, configs); a usage error at the first byte that is not. */
export async function readUtf8(path: string): Promise<string> {
  const decoded = utf8Text(await readFile(path));
  if (decoded.ok) return decoded.text;
  throw new UsageError(
    `${path}:${decoded.line}:${decoded.col}: the file is not UTF-8 text (an editor saved it as Latin-1 or Windows-1252?): save it as UTF-8`,
  );
}
