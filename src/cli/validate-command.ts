import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { loadRules, type RuleFile } from '../rules/load-rules.js';
import type { CatalogueTemplate, PackageCatalogue } from '../rules/package-catalogue.js';
import { formatRuleProblem } from '../rules/rule-problem.js';
import { loadModel } from '../sandbox/model/load-model.js';
import type { CliCommand } from './cli-command.js';
import type { CliIo } from './cli-io.js';
import { UsageError } from './usage-error.js';

const HELP = `Usage: ledgerbot validate [--config bot.config.yaml] [--model model.yaml]... [--format text|json] [paths...]

Checks rule files and prints every problem as file:line:col: message. Submits nothing.
A directory is loaded whole (its *.yaml and *.yml files, not *.test.yaml); without paths,
the config's \`rules:\` entry or ./rules is used.

Options:
  --config FILE    bot config: party aliases are checked against its \`parties:\`
  --model FILE     sandbox model: unknown templates and choices are reported (repeatable)
  --format FORMAT  text (default) or json
  -h, --help       show this help

Exit status: 0 when every file is valid (warnings allowed), 2 otherwise.
`;

/** Rule test files live beside rules; the \`test\` command reads them, \`validate\` skips them. */
const TEST_FILE = /\.test\.ya?ml$/;

export const validateCommand: CliCommand = {
  name: 'validate',
  summary: 'check rule files and print every problem with file:line:col',
  run: async (args: string[], io: CliIo) => {
    const { values, positionals } = parseArgs({
      args,
      options: {
        config: { type: 'string' },
        model: { type: 'string', multiple: true },
        format: { type: 'string', default: 'text' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (values.help === true) {
      io.out(HELP);
      return 0;
    }
    const format = values.format;
    if (format !== 'text' && format !== 'json') {
      throw new UsageError(`--format must be text or json, not "${format}"`);
    }
    const config = values.config === undefined ? undefined : await readConfig(values.config);
    const paths = positionals.length > 0 ? positionals : (config?.rules ?? [join('.', 'rules')]);
    const files = await readRuleFiles(paths);
    const packages = await readCatalogue(values.model ?? []);
    const { ruleSet, problems } = loadRules(files, {
      ...(config === undefined ? {} : { parties: config.parties }),
      ...(packages === undefined ? {} : { packages }),
    });
    const notes: string[] = [];
    if (config === undefined) {
      notes.push('party aliases were not checked: pass --config bot.config.yaml to check them');
    }
    if (packages === undefined) {
      notes.push('templates and choices were not checked: pass --model FILE to check them');
    }
    const errors = problems.filter((p) => p.severity === 'error').length;
    const warnings = problems.length - errors;
    if (format === 'json') {
      io.out(
        `${JSON.stringify(
          {
            valid: errors === 0,
            files: files.map((f) => f.path),
            rules: errors === 0 ? ruleSet.rules.map((r) => r.id) : [],
            errors,
            warnings,
            problems,
            notes,
          },
          null,
          2,
        )}\n`,
      );
    } else {
      for (const p of problems) io.out(`${formatRuleProblem(p)}\n`);
      for (const note of notes) io.err(`note: ${note}\n`);
      io.out(
        errors === 0
          ? `${files.length} file(s), ${ruleSet.rules.length} rule(s): valid${warnings > 0 ? ` (${warnings} warning(s))` : ''}\n`
          : `${files.length} file(s): ${errors} error(s), ${warnings} warning(s)\n`,
      );
    }
    return errors === 0 ? 0 : 2;
  },
};

type MinimalConfig = { parties: Record<string, string>; rules?: string[] };

/**
 * Reads just what validation needs from the bot config: `parties:` (alias → party id, or a list
 * of aliases) and `rules:` (a path or a list, relative to the config file). The full config schema
 * belongs to the runtime.
 */
async function readConfig(path: string): Promise<MinimalConfig> {
  let doc: unknown;
  try {
    doc = parseYaml(await readFile(path, 'utf8'), { maxAliasCount: 100 });
  } catch (error) {
    throw new UsageError(`cannot read config ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const raw = (typeof doc === 'object' && doc !== null ? doc : {}) as Record<string, unknown>;
  const parties: Record<string, string> = {};
  if (Array.isArray(raw.parties)) {
    for (const alias of raw.parties) if (typeof alias === 'string') parties[alias] = alias;
  } else if (typeof raw.parties === 'object' && raw.parties !== null) {
    for (const [alias, id] of Object.entries(raw.parties)) {
      parties[alias] = typeof id === 'string' ? id : JSON.stringify(id);
    }
  }
  const base = dirname(path);
  const rulesEntry: unknown = raw.rules;
  const rules =
    typeof rulesEntry === 'string'
      ? [join(base, rulesEntry)]
      : Array.isArray(rulesEntry)
        ? rulesEntry.filter((r): r is string => typeof r === 'string').map((r) => join(base, r))
        : undefined;
  return { parties, ...(rules === undefined ? {} : { rules }) };
}

/** Reads rule files; a directory gives its *.yaml and *.yml files except *.test.yaml. */
export async function readRuleFiles(paths: readonly string[]): Promise<RuleFile[]> {
  const files: RuleFile[] = [];
  for (const path of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(path)).isDirectory();
    } catch (error) {
      throw new UsageError(`cannot read ${path}: no such file or directory`, { cause: error });
    }
    const names = isDirectory
      ? (await readdir(path))
          .filter((n) => ['.yaml', '.yml'].includes(extname(n)) && !TEST_FILE.test(n))
          .sort()
          .map((n) => join(path, n))
      : [path];
    for (const name of names) files.push({ path: name, text: await readFile(name, 'utf8') });
  }
  return files;
}

async function readCatalogue(models: readonly string[]): Promise<PackageCatalogue | undefined> {
  if (models.length === 0) return undefined;
  const templates: CatalogueTemplate[] = [];
  for (const path of models) {
    let model: ReturnType<typeof loadModel>;
    try {
      model = loadModel(await readFile(resolve(path), 'utf8'), path);
    } catch (error) {
      throw new UsageError(`cannot use model ${path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    for (const t of model.templates.values()) {
      templates.push({
        packageName: t.packageName,
        packageId: t.packageId,
        module: t.moduleName,
        entity: t.entityName,
        choices: [...t.choices.keys()],
        hasKey: t.key !== null,
      });
    }
  }
  return { templates };
}
