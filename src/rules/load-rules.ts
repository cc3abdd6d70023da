import { DEFAULT_SOURCE_LIMITS } from '../core/source/index.js';
import { restoreYamlLocator } from '../core/source/yaml-snapshot.js';
import type { YamlLocator } from '../core/yaml-locator.js';
import { checkedRuleSourceOf, checkRuleText, type RuleFile } from './check-rule-text.js';
import { CelEnvironment } from './cel/cel-environment.js';
import type { CelProgramCache } from './cel-program-cache.js';
import type { CompiledRule, RuleSet, SourcePos } from './compiled-rule.js';
import type { RetryOptions } from './rule-options.js';
import { isRecord } from './is-record.js';
import type { PackageCatalogue } from '../daml-lf/package-catalogue.js';
import { compileRule } from './rule-compiler.js';
import { RuleError } from './rule-error.js';
import type { RuleProblem } from './rule-problem.js';
import { RuleScope, type RuleFileContext } from './rule-scope.js';
import { ruleSourceKey, type RuleSourceCache } from './rule-source-cache.js';
import { deepFreeze } from '../core/deep-freeze.js';

export type { RuleFile };

export type LoadRulesOptions = {
  /**
   * The party aliases of the bot config (a list, or the `parties:` map of alias → party id).
   * When given, every alias a rule uses must be one of them; when absent, aliases are not checked.
   */
  readonly parties?: readonly string[] | Readonly<Record<string, string>>;
  /** Known templates and choices; when given, unknown ones are reported. */
  readonly packages?: PackageCatalogue;
  /** Share one environment across loads; building one is the expensive part. */
  readonly cel?: CelEnvironment;
  /**
   * The CEL programs of the load before, kept for the next (see CelProgramCache); its
   * environment is this load's (`cel` is then ignored).
   */
  readonly programs?: CelProgramCache;
  /** Default 4 MiB. */
  readonly maxFileBytes?: number;
  /**
   * The bot config's `submission.retry`: used for every retry field a rule does not write itself.
   * @default DEFAULTS.retry (10 attempts, 1s, 1m, 1h), which `ledgerbot run` also uses when the
   * config has no `submission.retry`
   */
  readonly defaultRetry?: RetryOptions;
  /**
   * The checked form of clean files from earlier loads: a file found there (same path, bytes and
   * limit) is not parsed or schema-checked again; one checked now without a problem is added.
   */
  readonly sourceCache?: RuleSourceCache;
};

export type LoadRulesResult = {
  /** The rules without errors, compiled (warnings included). Use only when `problems` has no error. */
  readonly ruleSet: RuleSet;
  /** Every error and warning of every file, in file order, then by position. */
  readonly problems: readonly RuleProblem[];
};

/** More than this many problems in one file are summarised in one last problem. */
const MAX_PROBLEMS_PER_FILE = 200;

/**
 * Parses, validates and compiles rule files (language version 1). Pure: takes the files' text,
 * reads nothing. Reports every problem of every file at once, each with file:line:col.
 */
export function loadRules(
  files: readonly RuleFile[],
  options: LoadRulesOptions = {},
): LoadRulesResult {
  const programs = options.programs;
  programs?.beginLoad();
  const cel = programs?.environment ?? options.cel ?? CelEnvironment.create();
  const parties =
    options.parties === undefined
      ? undefined
      : Array.isArray(options.parties)
        ? new Set<string>(options.parties as readonly string[])
        : new Set(Object.keys(options.parties));
  const problems: RuleProblem[] = [];
  const rules: CompiledRule[] = [];
  const ids = new Map<string, SourcePos>();
  for (const file of files) {
    const fileProblems: RuleProblem[] = [];
    const compiled = loadFile(file, {
      cel,
      programs,
      parties,
      packages: options.packages,
      maxFileBytes: options.maxFileBytes ?? DEFAULT_SOURCE_LIMITS.maxBytes,
      defaultRetry: options.defaultRetry,
      problems: fileProblems,
      sourceCache: options.sourceCache,
    });
    for (const { id, rule, idPos } of compiled) {
      const first = ids.get(id);
      if (first !== undefined) {
        fileProblems.push({
          ...idPos,
          code: 'DUPLICATE_RULE_ID',
          severity: 'error',
          message: `duplicate rule id "${id}": it is also used at ${first.file}:${first.line}:${first.col}`,
          hint: 'rule ids are unique across all rule files; rename one of them',
        });
        continue;
      }
      ids.set(id, idPos);
      if (rule !== null) rules.push(rule);
    }
    problems.push(...capProblems(sortProblems(fileProblems), file.path));
  }
  const warnings = problems.filter((p) => p.severity === 'warning');
  return {
    // Objects frozen already are not walked again: shared parts of rules, and the catalogue's
    // package signatures, which rules refer to and a walk would otherwise cross at every load.
    ruleSet: deepFreeze({ rules: rules.filter((r) => r !== null), warnings }, isCelProgram),
    problems: Object.freeze(problems),
  };
}

/** loadRules, throwing RuleError when any file has an error. */
export function loadRulesOrThrow(
  files: readonly RuleFile[],
  options: LoadRulesOptions = {},
): RuleSet {
  const { ruleSet, problems } = loadRules(files, options);
  if (problems.some((p) => p.severity === 'error')) throw new RuleError(problems);
  return ruleSet;
}

type FileContext = RuleFileContext & { readonly sourceCache: RuleSourceCache | undefined };

/** Rules of one file, each with the position of its id; a rule with errors is null. */
type FileRules = { id: string; rule: CompiledRule | null; idPos: SourcePos }[];

function loadFile(file: RuleFile, ctx: FileContext): FileRules {
  const cache = ctx.sourceCache;
  const key = cache === undefined ? '' : ruleSourceKey(file, ctx.maxFileBytes);
  const cached = cache === undefined ? undefined : restoreChecked(file, cache, key);
  if (cached !== undefined) return compileRules(cached.value, cached.at, new Set(), ctx);
  const checked = checkRuleText(file, ctx.maxFileBytes);
  ctx.problems.push(...checked.problems);
  if (!checked.compile) return [];
  const entry = cache === undefined ? undefined : checkedRuleSourceOf(checked);
  if (cache !== undefined && entry !== undefined) {
    cache.set(key, entry);
    // The next load of this file (`run`'s second load at a cold start) takes this locator
    // instead of restoring one from the snapshot just taken: they answer alike.
    keptLocators(cache).set(file.path, { key, at: checked.at });
  }
  return compileRules(checked.raw, checked.at, checked.badRules, ctx);
}

/** A cached checked file, restored; undefined when absent or malformed (then it is parsed). */
function restoreChecked(
  file: RuleFile,
  cache: RuleSourceCache,
  key: string,
): { value: unknown; at: YamlLocator } | undefined {
  const entry = cache.get(key);
  if (entry === undefined) return undefined;
  try {
    if (!isRecord(entry.value)) return undefined;
    const byPath = keptLocators(cache);
    const kept = byPath.get(file.path);
    if (kept?.key === key) return { value: entry.value, at: kept.at };
    const at = restoreYamlLocator(file.path, file.text, entry.yaml);
    byPath.set(file.path, { key, at });
    return { value: entry.value, at };
  } catch {
    return undefined;
  }
}

/**
 * The locator last parsed or restored for each path of a cache, with the key it was made for:
 * `run`'s second load at start (and a reload of an unchanged file) takes it instead of restoring
 * it again. A locator is only read, so loads can share it; the value is each load's own copy.
 */
const restoredLocators = new WeakMap<
  RuleSourceCache,
  Map<string, { readonly key: string; readonly at: YamlLocator }>
>();

function keptLocators(
  cache: RuleSourceCache,
): Map<string, { readonly key: string; readonly at: YamlLocator }> {
  let byPath = restoredLocators.get(cache);
  if (byPath === undefined) {
    byPath = new Map();
    restoredLocators.set(cache, byPath);
  }
  return byPath;
}

function compileRules(
  raw: unknown,
  at: YamlLocator,
  badRules: ReadonlySet<number>,
  ctx: FileContext,
): FileRules {
  const rawRules = (raw as { rules?: unknown }).rules;
  if (!Array.isArray(rawRules)) return [];
  const out: FileRules = [];
  rawRules.forEach((rawRule: unknown, index) => {
    if (!isRecord(rawRule) || typeof rawRule.id !== 'string') return;
    const before = ctx.problems.filter((p) => p.severity === 'error').length;
    const rule = compileRule(new RuleScope(rawRule, ['rules', index], at, ctx));
    const failed =
      badRules.has(index) || ctx.problems.filter((p) => p.severity === 'error').length > before;
    out.push({ id: rawRule.id, rule: failed ? null : rule, idPos: at.pos(['rules', index, 'id']) });
  });
  return out;
}

function sortProblems(problems: RuleProblem[]): RuleProblem[] {
  return problems.sort((a, b) => a.line - b.line || a.col - b.col);
}

function capProblems(problems: RuleProblem[], file: string): RuleProblem[] {
  if (problems.length <= MAX_PROBLEMS_PER_FILE) return problems;
  const last = problems[MAX_PROBLEMS_PER_FILE - 1]!;
  return [
    ...problems.slice(0, MAX_PROBLEMS_PER_FILE - 1),
    {
      file,
      line: last.line,
      col: last.col,
      code: 'SCHEMA',
      severity: 'error',
      message: `${problems.length - MAX_PROBLEMS_PER_FILE + 1} more problems in this file are not shown`,
      hint: 'fix the ones above first',
    },
  ];
}

/** Compiled CEL programs are the library's objects: freezing them could break it. */
function isCelProgram(x: object): boolean {
  return 'evaluate' in x && 'source' in x;
}
