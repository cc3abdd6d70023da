import { parseYamlSource, schemaChecker, type YamlSource } from '../core/source/index.js';
import { isPlainJson, snapshotYaml } from '../core/source/yaml-snapshot.js';
import type { YamlLocator, YamlPath } from '../core/yaml-locator.js';
import type { SourcePos } from './compiled-rule.js';
import { validate as validateRuleFile } from './generated/rules-validator.js';
import { RULE_FILE_WORDING } from './rule-file-wording.js';
import type { RuleProblem, RuleProblemCode } from './rule-problem.js';
import type { CheckedRuleSource } from './rule-source-cache.js';
import { RULE_FILE_AJV_OPTIONS, RULES_SCHEMA } from './rules-schema.js';
import { misplacedTemplates } from './template-placement.js';

/** One rule file's contents; `path` is only used in messages. */
export type RuleFile = { readonly path: string; readonly text: string };

/**
 * A rule file read up to the point its rules are compiled: YAML, the schema (defaults filled
 * in) and where `${{ }}` may appear. `compile: false` when nothing of it can be compiled (a
 * syntax error, a file that is not a rule file); else `raw` is its value, `at` points into its
 * text and `badRules` are the indexes of rules with an error already.
 */
export type CheckedRuleText =
  | { readonly compile: false; readonly problems: readonly RuleProblem[] }
  | {
      readonly compile: true;
      readonly problems: readonly RuleProblem[];
      readonly source: YamlSource;
      readonly raw: unknown;
      readonly at: YamlLocator;
      readonly badRules: ReadonlySet<number>;
    };

const checkRuleFile = schemaChecker(RULES_SCHEMA, {
  ajv: RULE_FILE_AJV_OPTIONS,
  compiled: validateRuleFile,
  ...RULE_FILE_WORDING,
});

/**
 * For a key missing at the top of the file (`rules`), the unknown top-level key whose
 * did-you-mean names it (`rule`), if there is one.
 */
function misspeltTopKey<P extends { path: YamlPath; code: string; message: string; hint?: string }>(
  problem: P,
  all: readonly P[],
): P | undefined {
  if (problem.code !== 'MISSING_KEY' || problem.path.length !== 0) return undefined;
  const missing = /^`(\w+)` is missing/.exec(problem.message)?.[1];
  if (missing === undefined) return undefined;
  return all.find(
    (q) =>
      q.code === 'UNKNOWN_KEY' && q.path.length === 1 && q.hint === `did you mean "${missing}"?`,
  );
}

/**
 * `created: #invoices:Invoice:Invoice` reads as `created:` and a comment: an empty value where
 * text goes, whose cause is on its line.
 */
function commentedValueHint(
  p: { line: number; message: string },
  text: string,
): string | undefined {
  if (!p.message.endsWith(', not empty')) return undefined;
  return /:\s+#\S/.test(text.split('\n')[p.line - 1] ?? '')
    ? 'quote a value that starts with #: # starts a comment, e.g. created: "#invoices:Invoice:Invoice"'
    : undefined;
}

/** Parses and checks one rule file (pure: the text is given). Problems are in finding order. */
export function checkRuleText(file: RuleFile, maxFileBytes: number): CheckedRuleText {
  const problems: RuleProblem[] = [];
  const report = (pos: SourcePos, code: RuleProblemCode, message: string, hint?: string): void => {
    problems.push({
      file: pos.file,
      line: pos.line,
      col: pos.col,
      code,
      severity: 'error',
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  };
  const parsed = parseYamlSource(file.path, file.text, {
    noun: 'rule file',
    limits: { maxBytes: maxFileBytes },
    tooLargeAdvice: 'split it into several files in the rules directory',
  });
  if (!parsed.ok) {
    for (const p of parsed.problems) report(p, p.code, p.message, p.hint);
    return { compile: false, problems };
  }
  const { doc, at, value: raw } = parsed.source;
  const badRules = new Set<number>();
  const forbidden = misplacedTemplates(doc.contents);
  const forbiddenPaths = new Set(forbidden.map(({ path }) => path.join('/')));
  const unknownKeys: string[] = [];
  const check = checkRuleFile(raw, at);
  const aboutValue = (p: SourcePos & { path: YamlPath }): boolean => {
    const value = at.pos(p.path);
    return value.line === p.line && value.col === p.col;
  };
  for (const found of check.problems) {
    // "${{ }}" where it is not allowed is the real mistake; a pattern error on it is noise.
    if (forbiddenPaths.has(found.path.join('/')) && aboutValue(found)) continue;
    // `rule:` for `rules:`: the misspelt key says more than "`rules` is missing".
    const p = misspeltTopKey(found, check.problems) ?? found;
    if (p.code === 'UNKNOWN_KEY') unknownKeys.push(`${p.path.join('/')}/`);
    report(p, p.code, p.message, p.hint ?? commentedValueHint(p, parsed.source.text));
    if (found.path.length === 0 || p.code === 'UNSUPPORTED_VERSION') {
      return { compile: false, problems };
    }
  }
  for (const path of check.errorPaths) {
    if (path[0] === 'rules' && typeof path[1] === 'number') badRules.add(path[1]);
  }
  for (const { path, node } of forbidden) {
    // Under a misspelled key: the unknown key is reported, and is the thing to fix first.
    if (unknownKeys.some((k) => `${path.join('/')}/`.startsWith(k))) continue;
    const value = String((node as { value: unknown }).value);
    const field = [...path].reverse().find((p) => typeof p === 'string') ?? '';
    report(
      at.valuePos(path, value.indexOf('${{')),
      'TEMPLATE_NOT_ALLOWED',
      `"\${{ }}" is not allowed in \`${String(field)}\``,
      field === 'when'
        ? '`when` is already an expression: write it without "${{ }}", e.g. `when: event.createArgument.amount > 0`'
        : '"${{ }}" works only in action arguments (createArguments, choiceArgument, contractId, contractKey), workflowId and disclosedContracts',
    );
    if (path[0] === 'rules' && typeof path[1] === 'number') badRules.add(path[1]);
  }
  return { compile: true, problems, source: parsed.source, raw, at, badRules };
}

/**
 * What a RuleSourceCache keeps of a file checked without a problem; undefined for a file with
 * one (its problems are reported by checking it again), or whose value JSON would not carry.
 * A copy: compiling must not see (or freeze) the value a later load gets.
 */
export function checkedRuleSourceOf(checked: CheckedRuleText): CheckedRuleSource | undefined {
  if (!checked.compile || checked.problems.length > 0 || !isPlainJson(checked.raw)) {
    return undefined;
  }
  const yaml = snapshotYaml(checked.source);
  if (yaml === null) return undefined;
  return JSON.parse(JSON.stringify({ value: checked.raw, yaml })) as CheckedRuleSource;
}
