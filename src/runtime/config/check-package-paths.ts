import { extname } from 'node:path';
import type { ConfigCheckContext } from './config-problem-list.js';
import type { RawBotConfig } from './raw-bot-config.js';

/** A `ledger.packages` entry as written (relative paths stay relative) and where it is. */
export type PackagePathEntry = {
  readonly path: string;
  readonly line: number;
  readonly col: number;
};

/** Extensions of the files people confuse with packages: sandbox models, rule files. */
const NOT_A_PACKAGE = new Set(['.yaml', '.yml', '.json', '.daml']);

/**
 * The checks of `ledger.packages` that need no file system: an entry listed twice, and an entry
 * that names a YAML, JSON or Daml source file (a model or a rule file, or the source a DAR is
 * built from) where a built package is meant. Whether each entry exists, and is a DAR, a DALF
 * or a directory, is for whoever reads them (the CLI), which names the entry's position.
 */
export function checkPackagePaths(
  raw: RawBotConfig,
  { at, problems }: ConfigCheckContext,
): PackagePathEntry[] {
  const seen = new Map<string, number>();
  return raw.ledger.packages.map((path, i) => {
    const where = ['ledger', 'packages', i];
    const pos = at.pos(where);
    const first = seen.get(path);
    if (first !== undefined) {
      problems.add(
        pos,
        where,
        'BAD_PACKAGE_PATH',
        `\`ledger.packages\` lists ${path} twice (also at line ${first})`,
        'list each DAR, DALF or directory once',
      );
    } else seen.set(path, pos.line);
    const ext = extname(path).toLowerCase();
    if (NOT_A_PACKAGE.has(ext)) {
      problems.add(
        pos,
        where,
        'BAD_PACKAGE_PATH',
        `\`ledger.packages\` names ${path}, a ${ext} file: packages are DAR (.dar) or DALF (.dalf) files, or directories of them`,
        ext === '.daml'
          ? 'build the Daml project (`dpm build` or `daml build`) and list the .dar it writes'
          : 'a sandbox model goes in `ledger.embedded.models`, or in `--model` for validate and test',
      );
    }
    return { path, line: pos.line, col: pos.col };
  });
}
