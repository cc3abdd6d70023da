import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { DEFAULTS } from '../../core/defaults.js';
import { loadRules } from '../../rules/load-rules.js';
import type { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import { formatRuleProblem } from '../../rules/rule-problem.js';
import {
  formatRuleTestResult,
  parseRuleTestFile,
  runRuleTests,
} from '../../rules/rule-tests/index.js';
import { defineCommand } from '../define-command.js';
import type { CliIo } from '../cli-io.js';
import { colourFor, NO_COLOR_OPTION, paintProblems, type Colour } from '../present/colour.js';
import { readConfig } from '../compose/read-config.js';
import { UsageError } from '../usage-error.js';
import { isDirectoryPath, readRuleFiles } from '../compose/read-rule-files.js';
import { readRuleCatalogue } from '../compose/read-rule-catalogue.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';

const TEST_FILE = /\.test\.ya?ml$/;
const YAML_FILE = new Set(['.yaml', '.yml']);
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage']);
/** Directory levels searched for test files; deeper trees are not test layouts. */
const MAX_DEPTH = 8;
const DEFAULT_CONFIG = DEFAULTS.cli.configFile;

export const testCommand = defineCommand({
  name: 'test',
  summary: "run rule unit tests (the config's tests/, or the paths given)",
  usage: `test [--config bot.config.yaml] [--dar FILE]... [--model model.yaml]... [--verbose] [--no-color] [paths...]`,
  description: `Runs rule unit tests: given these events (or a schedule slot and its contracts), expect these
commands, none, or these rule errors. See docs/rules.md, "Testing rules".

Without paths it runs the tests of the config's project: the files and directories of its
\`tests:\` entry (default tests/, relative to the config file). A path is a test file or a
directory searched for *.test.yaml files. Rule test files are recognised by their content
(\`rules:\` and \`tests:\`); other YAML (a Prometheus rule test, a rule file) is skipped with a
note.

Rules are type-checked against the config's packages and models (\`ledger.packages\`,
\`ledger.embedded.models\`; never the participant's: tests run offline) and --dar and --model.`,
  options: {
    config: {
      type: 'string',
      value: 'FILE',
      help: `the bot config whose \`tests:\` to run (default ./bot.config.yaml; without\nit and without paths, the current directory is searched)`,
    },
    dar: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'a DAR or DALF file, or a directory of them (repeatable): rules are checked\nagainst its packages, expected values compared by their Daml types',
    },
    model: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'sandbox model (repeatable): expected values are compared by the Daml types\nof its templates (Numeric by value, Time by instant, Text as written)',
    },
    verbose: {
      type: 'boolean',
      default: false,
      help: 'also print why each rule did or did not fire, for passing tests too',
    },
    ...NO_COLOR_OPTION,
  },
  positionals: true,
  footer: `Exit status: 0 when every test passes, 1 when a test fails, 2 when a test file (or the rules
it names) has errors, or there is no test to run.`,
  run: async ({ values, positionals }, io) => {
    const colour = colourFor(io, values['no-color']);
    const where = await testLocations(positionals, values.config, io);
    const candidates = await findCandidates(where.paths, where.anyYaml);
    const paths: string[] = [];
    for (const path of candidates) {
      const text = await readFile(path, 'utf8');
      const why = notARuleTest(path, text);
      if (why === undefined) paths.push(path);
      else io.err(`note: skipped ${path}: ${why}\n`);
    }
    if (paths.length === 0) {
      throw new UsageError(
        `no rule test files found in ${where.paths.map((p) => relative(process.cwd(), p) || '.').join(', ')}${where.from === undefined ? '' : ` (${where.from})`}`,
      );
    }
    const types = await readRuleCatalogue(where.config, {
      dars: values.dar ?? [],
      models: values.model ?? [],
      offline: true,
    });
    if (values.verbose === true) for (const note of types.notes) io.err(`note: ${note}\n`);
    const packages = types.loaded?.catalogue;
    let passed = 0;
    let failed = 0;
    let broken = 0;
    for (const path of paths) {
      const outcome = await runFile(path, values.verbose === true, io, colour, packages);
      if (outcome === 'broken') broken++;
      else {
        passed += outcome.passed;
        failed += outcome.failed;
      }
    }
    const summary = [
      colour.green(`${passed} passed`),
      failed > 0 ? colour.red(`${failed} failed`) : `${failed} failed`,
      ...(broken > 0 ? [colour.red(`${broken} file(s) with errors`)] : []),
    ].join(', ');
    io.out(`\n${summary}\n`);
    return broken > 0 ? 2 : failed > 0 ? 1 : 0;
  },
});

type TestLocations = {
  readonly paths: readonly string[];
  /** The config's `tests:` entry: every YAML file below it is a candidate, not only *.test.yaml. */
  readonly anyYaml: boolean;
  /** Where the paths came from, for messages. */
  readonly from?: string;
  /** The config read (`--config`, or ./bot.config.yaml without paths): its packages are used. */
  readonly config?: BotConfig;
};

/**
 * Paths given win. Otherwise the config's `tests:` (with --config, or ./bot.config.yaml when it
 * exists); with neither, the current directory.
 */
async function testLocations(
  positionals: readonly string[],
  configPath: string | undefined,
  io: CliIo,
): Promise<TestLocations> {
  if (positionals.length > 0) {
    return {
      paths: positionals,
      anyYaml: false,
      ...(configPath === undefined ? {} : { config: await readTestConfig(configPath) }),
    };
  }
  if (configPath === undefined && !(await exists(DEFAULT_CONFIG))) {
    io.err(`note: no ${DEFAULT_CONFIG} here: searching the current directory for *.test.yaml\n`);
    return { paths: ['.'], anyYaml: false, from: 'the current directory' };
  }
  const file = configPath ?? DEFAULT_CONFIG;
  const config = await readTestConfig(file);
  const paths = config.tests.map((p) => relative(process.cwd(), p) || '.');
  for (const path of paths) {
    if (!(await exists(path))) {
      throw new UsageError(
        `no rule tests: ${path} does not exist (\`tests:\` of ${file}, default tests/ beside it); write rule tests there, set \`tests:\`, or pass paths`,
      );
    }
  }
  return {
    paths,
    anyYaml: true,
    from: `\`tests:\` of ${file}, default tests/ beside it`,
    config,
  };
}

/** Rule tests need no credentials: an unset variable in a secret field is ignored here. */
function readTestConfig(file: string): Promise<BotConfig> {
  return readConfig(file, process.env, { onUnsetSecret: () => undefined });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why `text` is not a rule test file (a note for the user), or undefined when it is one: a
 * mapping with `tests:` and `rules:` or `parties:` (or, in a file named *.test.yaml, `tests:`
 * alone, so a test file missing its `rules:` is reported, not skipped). Text that is not YAML
 * counts as a test file when so named, so its syntax errors are reported.
 */
export function notARuleTest(path: string, text: string): string | undefined {
  const named = TEST_FILE.test(path);
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 100, prettyErrors: false });
  } catch {
    return named ? undefined : 'not valid YAML';
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    return 'not a rule test file (not a mapping with `rules:` and `tests:`)';
  }
  const has = (key: string): boolean => Object.hasOwn(doc, key);
  if (has('rule_files') || has('evaluation_interval')) {
    return 'a Prometheus rule test (`rule_files:`), not a rule test file; run it with `promtool test rules`';
  }
  if (has('version') && has('rules') && !has('tests')) return 'a rule file, not a rule test file';
  if (has('tests') && (has('rules') || has('parties') || named)) return undefined;
  return 'not a rule test file (it has no `rules:` and `tests:`)';
}

async function runFile(
  path: string,
  verbose: boolean,
  io: CliIo,
  colour: Colour,
  packages: PackageCatalogue | undefined,
): Promise<'broken' | { passed: number; failed: number }> {
  const heading = colour.bold(path);
  const parsed = parseRuleTestFile(path, await readFile(path, 'utf8'));
  if (!parsed.ok) {
    io.out(`${heading}\n`);
    for (const p of parsed.problems) io.out(`${paintProblems(formatRuleProblem(p), colour)}\n`);
    return 'broken';
  }
  const file = parsed.file;
  const where = colour.cyan(`${file.rulesPos.file}:${file.rulesPos.line}:${file.rulesPos.col}:`);
  let ruleFiles;
  try {
    ruleFiles = await readRuleFiles(file.rules.map((r) => resolve(dirname(path), r)));
  } catch (error) {
    io.out(`${heading}\n${where} ${colour.red((error as Error).message)}\n`);
    return 'broken';
  }
  // Checked and compiled against the packages given, as `run` does (an interface is one).
  const { ruleSet, problems } = loadRules(ruleFiles, {
    parties: file.parties,
    ...(packages === undefined ? {} : { packages }),
  });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    io.out(`${heading}\n${where} ${colour.red('the rules this file tests have errors:')}\n`);
    for (const p of errors) io.out(`${paintProblems(formatRuleProblem(p), colour)}\n`);
    return 'broken';
  }
  const result = runRuleTests(file, ruleSet, packages === undefined ? {} : { packages });
  io.out(paintReport(formatRuleTestResult(result, { verbose }), colour));
  return { passed: result.passed, failed: result.failed };
}

/** Colours formatRuleTestResult's text: the file, ✓ and ✗ lines, locations, expected/actual. */
function paintReport(text: string, c: Colour): string {
  if (!c.enabled) return text;
  const lines = text.split('\n');
  return lines
    .map((line, i) => {
      if (i === 0) return c.bold(line);
      let m = /^(\s*)✓ (.*)$/.exec(line);
      if (m !== null) return `${m[1]}${c.green('✓')} ${m[2]}`;
      m = /^(\s*)✗ (.*)$/.exec(line);
      if (m !== null) return `${m[1]}${c.red(`✗ ${m[2]}`)}`;
      m = /^(\s*)at (\S+:\d+:\d+)$/.exec(line);
      if (m !== null) return `${m[1]}at ${c.cyan(m[2]!)}`;
      m = /^(\s*)([-+]) (.*)$/.exec(line);
      if (m !== null) return `${m[1]}${(m[2] === '-' ? c.red : c.green)(`${m[2]} ${m[3]}`)}`;
      return line;
    })
    .join('\n');
}

/**
 * The files to look at: a file path as given; a directory searched for *.test.yaml files, or
 * (`anyYaml`, for the config's `tests:`) for every YAML file, each then recognised by content.
 */
async function findCandidates(paths: readonly string[], anyYaml: boolean): Promise<string[]> {
  const found: string[] = [];
  for (const path of paths) {
    if (await isDirectoryPath(path)) await walk(path, 0, anyYaml, found);
    else found.push(path);
  }
  return found;
}

async function walk(dir: string, depth: number, anyYaml: boolean, found: string[]): Promise<void> {
  if (depth > MAX_DEPTH) return;
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.') && !SKIPPED_DIRS.has(entry.name)) {
        await walk(full, depth + 1, anyYaml, found);
      }
    } else if (anyYaml ? YAML_FILE.has(extname(entry.name)) : TEST_FILE.test(entry.name)) {
      found.push(full);
    }
  }
}
