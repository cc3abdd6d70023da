import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadRules } from '../rules/load-rules.js';
import { formatRuleProblem } from '../rules/rule-problem.js';
import { formatRuleTestResult, parseRuleTestFile, runRuleTests } from '../rules/rule-tests.js';
import type { CliCommand } from './cli-command.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './usage-error.js';
import { readRuleFiles } from './validate-command.js';

const HELP = `Usage: ledgerbot test [--verbose] [paths...]

Runs rule unit tests: given these events (or a schedule slot and its contracts), expect these
commands, none, or these rule errors. A path is a test file (*.test.yaml, *.test.yml) or a
directory searched for them; without paths, the current directory is searched. See
docs/rules.md, "Testing rules".

Options:
  --verbose   also print why each rule did or did not fire, for passing tests too
  -h, --help  show this help

Exit status: 0 when every test passes, 1 when a test fails, 2 when a test file (or the rules
it names) has errors.
`;

const TEST_FILE = /\.test\.ya?ml$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);
/** Directory levels searched for test files; deeper trees are not test layouts. */
const MAX_DEPTH = 8;

export const testCommand: CliCommand = {
  name: 'test',
  summary: 'run rule unit tests (*.test.yaml) and report like a test runner',
  run: async (args: string[], io: CliIo) => {
    const { values, positionals } = parseArgs({
      args,
      options: {
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (values.help === true) {
      io.out(HELP);
      return 0;
    }
    const paths = await findTestFiles(positionals.length > 0 ? positionals : ['.']);
    if (paths.length === 0) {
      throw new UsageError(
        `no test files (*.test.yaml) found in ${positionals.join(', ') || 'the current directory'}`,
      );
    }
    let passed = 0;
    let failed = 0;
    let broken = 0;
    for (const path of paths) {
      const outcome = await runFile(path, values.verbose === true, io);
      if (outcome === 'broken') broken++;
      else {
        passed += outcome.passed;
        failed += outcome.failed;
      }
    }
    const summary = `${passed} passed, ${failed} failed${broken > 0 ? `, ${broken} file(s) with errors` : ''}`;
    io.out(`\n${summary}\n`);
    return broken > 0 ? 2 : failed > 0 ? 1 : 0;
  },
};

async function runFile(
  path: string,
  verbose: boolean,
  io: CliIo,
): Promise<'broken' | { passed: number; failed: number }> {
  const parsed = parseRuleTestFile(path, await readFile(path, 'utf8'));
  if (!parsed.ok) {
    io.out(`${path}\n`);
    for (const p of parsed.problems) io.out(`${formatRuleProblem(p)}\n`);
    return 'broken';
  }
  const file = parsed.file;
  const where = `${file.rulesPos.file}:${file.rulesPos.line}:${file.rulesPos.col}`;
  let ruleFiles;
  try {
    ruleFiles = await readRuleFiles(file.rules.map((r) => join(dirname(path), r)));
  } catch (error) {
    io.out(`${path}\n${where}: ${(error as Error).message}\n`);
    return 'broken';
  }
  const { ruleSet, problems } = loadRules(ruleFiles, { parties: file.parties });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    io.out(`${path}\n${where}: the rules this file tests have errors:\n`);
    for (const p of errors) io.out(`${formatRuleProblem(p)}\n`);
    return 'broken';
  }
  const result = runRuleTests(file, ruleSet);
  io.out(formatRuleTestResult(result, { verbose }));
  return { passed: result.passed, failed: result.failed };
}

async function findTestFiles(paths: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const path of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(path)).isDirectory();
    } catch (error) {
      throw new UsageError(`cannot read ${path}: no such file or directory`, { cause: error });
    }
    if (isDirectory) await walk(path, 0, found);
    else found.push(path);
  }
  return found;
}

async function walk(dir: string, depth: number, found: string[]): Promise<void> {
  if (depth > MAX_DEPTH) return;
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.') && !SKIPPED_DIRS.has(entry.name)) {
        await walk(full, depth + 1, found);
      }
    } else if (TEST_FILE.test(entry.name)) {
      found.push(full);
    }
  }
}
