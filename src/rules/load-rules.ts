import { isScalar, isMap, isSeq, type Node } from 'yaml';
import { DEFAULT_SOURCE_LIMITS, parseYamlSource, schemaChecker } from '../core/source/index.js';
import { parseDuration } from '../core/duration.js';
import type { YamlLocator} from '../core/yaml-locator.js';
import { type YamlPath } from '../core/yaml-locator.js';
import { CelCompileError } from './cel/cel-compile-error.js';
import { CelEnvironment } from './cel/cel-environment.js';
import type { NumberOperand, ReadPath } from './cel/read-paths.js';
import { celHint, type RuleKind, type Variables } from './cel-hint.js';
import { closestMatch } from '../core/source/closest-match.js';
import { numberText, yamlNumberText } from './daml-number-text.js';
import {
  EVENT_RULE_VARIABLES,
  SCHEDULE_RULE_VARIABLES,
  SLOT_RULE_VARIABLES,
  type CatchUpPolicy,
  type CompiledAction,
  type CompiledCondition,
  type CompiledExpression,
  type CompiledRule,
  type CompiledValue,
  type ForEach,
  type JsonValue,
  type RetryOptions,
  type RuleOptions,
  type RuleSet,
  type SourcePos,
  type TemplateRef,
  type Trigger,
} from './compiled-rule.js';
import { catalogueEntriesOf, type PackageCatalogue } from './package-catalogue.js';
import { parseCron } from './parse-cron.js';
import { parseTemplateRef } from './parse-template-ref.js';
import { RuleError } from './rule-error.js';
import type { RuleProblem, RuleProblemCode } from './rule-problem.js';
import { COMMAND_KINDS, RULE_LIMITS, RULES_SCHEMA, TRIGGER_KINDS } from './rules-schema.js';
import { RULE_FILE_WORDING } from './rule-file-wording.js';
import { hasTemplate, splitTemplate } from './split-template.js';
import { fieldTrieOf } from './field-reads.js';
import {
  numberTextOperands,
  unknownFieldReads,
  valueRootTypes,
  type ValueRootTypes,
} from './unknown-field-reads.js';
import { eventShapeOf, unknownEventFieldReads, type EventShape } from './event-fields.js';

/** One rule file's contents; `path` is only used in messages. */
export type RuleFile = { readonly path: string; readonly text: string };

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
  /** Default 4 MiB. */
  readonly maxFileBytes?: number;
  /**
   * The bot config's `submission.retry`: used for every retry field a rule does not write itself
   * (the schema's own defaults apply otherwise).
   */
  readonly defaultRetry?: RetryOptions;
};

export type LoadRulesResult = {
  /** The rules without errors, compiled (warnings included). Use only when `problems` has no error. */
  readonly ruleSet: RuleSet;
  /** Every error and warning of every file, in file order, then by position. */
  readonly problems: readonly RuleProblem[];
};

/** More than this many problems in one file are summarised in one last problem. */
const MAX_PROBLEMS_PER_FILE = 200;
/** Comprehension macros (all, exists, map, filter) may nest this deep; their cost multiplies. */
const MAX_COMPREHENSION_DEPTH = 2;

const checkRuleFile = schemaChecker(RULES_SCHEMA, {
  ajv: { useDefaults: true },
  ...RULE_FILE_WORDING,
});

/** The action fields that hold Daml values, where numbers are sent as text. */
const DAML_VALUE_FIELDS: ReadonlySet<string> = new Set([
  'createArguments',
  'choiceArgument',
  'contractKey',
]);

/** Where `${{ }}` may appear: the arguments and workflowId/disclosedContracts of an action. */
const TEMPLATE_FIELDS = new Set(['createArguments', 'choiceArgument', 'contractId', 'contractKey']);

/**
 * Parses, validates and compiles rule files (language version 1). Pure: takes the files' text,
 * reads nothing. Reports every problem of every file at once, each with file:line:col.
 */
export function loadRules(
  files: readonly RuleFile[],
  options: LoadRulesOptions = {},
): LoadRulesResult {
  const cel = options.cel ?? CelEnvironment.create();
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
      parties,
      packages: options.packages,
      maxFileBytes: options.maxFileBytes ?? DEFAULT_SOURCE_LIMITS.maxBytes,
      defaultRetry: options.defaultRetry,
      problems: fileProblems,
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
    ruleSet: deepFreeze({ rules: rules.filter((r) => r !== null), warnings }),
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

type FileContext = {
  readonly cel: CelEnvironment;
  readonly parties: ReadonlySet<string> | undefined;
  readonly packages: PackageCatalogue | undefined;
  readonly maxFileBytes: number;
  readonly defaultRetry: RetryOptions | undefined;
  readonly problems: RuleProblem[];
};

/** Rules of one file, each with the position of its id; a rule with errors is null. */
type FileRules = { id: string; rule: CompiledRule | null; idPos: SourcePos }[];

function loadFile(file: RuleFile, ctx: FileContext): FileRules {
  const parsed = parseYamlSource(file.path, file.text, {
    noun: 'rule file',
    limits: { maxBytes: ctx.maxFileBytes },
    tooLargeAdvice: 'split it into several files in the rules directory',
  });
  const report = (pos: SourcePos, code: RuleProblemCode, message: string, hint?: string): void => {
    ctx.problems.push({
      file: pos.file,
      line: pos.line,
      col: pos.col,
      code,
      severity: 'error',
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  };
  if (!parsed.ok) {
    for (const p of parsed.problems) report(p, p.code, p.message, p.hint);
    return [];
  }
  const { doc, at, value: raw } = parsed.source;
  const badRules = new Set<number>();
  const forbidden = templateStrings(doc.contents).filter(({ path }) => !templateAllowed(path));
  const forbiddenPaths = new Set(forbidden.map(({ path }) => path.join('/')));
  const unknownKeys: string[] = [];
  const check = checkRuleFile(raw, at);
  const aboutValue = (p: SourcePos & { path: YamlPath }): boolean => {
    const value = at.pos(p.path);
    return value.line === p.line && value.col === p.col;
  };
  for (const p of check.problems) {
    // "${{ }}" where it is not allowed is the real mistake; a pattern error on it is noise.
    if (forbiddenPaths.has(p.path.join('/')) && aboutValue(p)) continue;
    if (p.code === 'UNKNOWN_KEY') unknownKeys.push(`${p.path.join('/')}/`);
    report(p, p.code, p.message, p.hint);
    if (p.path.length === 0 || p.code === 'UNSUPPORTED_VERSION') return [];
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
  const rawRules = (raw as { rules?: unknown }).rules;
  if (!Array.isArray(rawRules)) return [];
  const out: FileRules = [];
  rawRules.forEach((rawRule: unknown, index) => {
    if (!isRecord(rawRule) || typeof rawRule.id !== 'string') return;
    const before = ctx.problems.filter((p) => p.severity === 'error').length;
    const compiler = new RuleCompiler(rawRule, ['rules', index], at, ctx);
    const rule = compiler.compile();
    const failed =
      badRules.has(index) || ctx.problems.filter((p) => p.severity === 'error').length > before;
    out.push({ id: rawRule.id, rule: failed ? null : rule, idPos: at.pos(['rules', index, 'id']) });
  });
  return out;
}

function templateAllowed(path: YamlPath): boolean {
  if (path[0] !== 'rules' || path[2] !== 'then' || typeof path[3] !== 'number') return false;
  const field = path[4];
  if (field === 'workflowId' || field === 'disclosedContracts') return true;
  return (
    typeof field === 'string' &&
    (COMMAND_KINDS as readonly string[]).includes(field) &&
    typeof path[5] === 'string' &&
    TEMPLATE_FIELDS.has(path[5])
  );
}

/** Every string scalar holding `${{`, with its path; walks iteratively (input is untrusted). */
function templateStrings(root: unknown): { path: YamlPath; node: Node }[] {
  const found: { path: YamlPath; node: Node }[] = [];
  const stack: { node: unknown; path: YamlPath }[] = [{ node: root, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (isScalar(node)) {
      if (typeof node.value === 'string' && hasTemplate(node.value)) found.push({ path, node });
    } else if (isMap(node)) {
      for (const pair of node.items) {
        if (isScalar(pair.key))
          stack.push({ node: pair.value, path: [...path, String(pair.key.value)] });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => stack.push({ node: item, path: [...path, i] }));
    }
  }
  return found.reverse();
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
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

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  const seen = new Set<unknown>();
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null || seen.has(x)) continue;
    seen.add(x);
    // Compiled CEL programs are the library's objects: freezing them could break it.
    if ('evaluate' in x && 'source' in x) continue;
    Object.freeze(x);
    for (const v of Object.values(x)) stack.push(v);
  }
  return value;
}

const VARIABLES: Readonly<Record<RuleKind, Variables>> = {
  event: EVENT_RULE_VARIABLES,
  schedule: SCHEDULE_RULE_VARIABLES,
  slot: SLOT_RULE_VARIABLES,
};

/** Compiles one schema-checked rule. Defensive: a field the schema rejected is skipped silently. */
class RuleCompiler {
  readonly #raw: Record<string, unknown>;
  readonly #path: YamlPath;
  readonly #at: YamlLocator;
  readonly #ctx: FileContext;
  #ok = true;
  /** Every field path the rule's expressions read (see field-reads.ts). */
  readonly #reads: ReadPath[] = [];
  /** The catalogue's types of the Daml values the rule reads; null when unknown. */
  #valueTypes: ValueRootTypes | null = null;
  /** What `event` (or `contract`) holds, from the trigger; null when unknown or absent. */
  #eventShape: EventShape | null = null;

  constructor(raw: Record<string, unknown>, path: YamlPath, at: YamlLocator, ctx: FileContext) {
    this.#raw = raw;
    this.#path = path;
    this.#at = at;
    this.#ctx = ctx;
  }

  compile(): CompiledRule | null {
    const raw = this.#raw;
    const trigger = this.#trigger();
    if (trigger !== null) {
      this.#valueTypes = valueRootTypes(trigger, this.#triggerEntries(trigger));
      this.#eventShape = eventShapeOf(trigger);
    }
    // From the raw shape, so expressions are checked even when the trigger has errors.
    const kind: RuleKind = isRecord(raw.on)
      ? 'event'
      : isRecord(raw.forEach)
        ? 'schedule'
        : isRecord(raw.schedule)
          ? 'slot'
          : 'event';
    const variables: Variables = VARIABLES[kind];
    const when = this.#when(variables, kind);
    const then = Array.isArray(raw.then)
      ? raw.then.map((a: unknown, i) => this.#action(a, i, variables, kind))
      : [];
    const options = this.#options();
    if (!this.#ok || trigger === null || when === null || options === null) return null;
    if (then.length === 0 || then.some((a) => a === null)) return null;
    return {
      id: raw.id as string,
      revision: typeof raw.revision === 'number' ? raw.revision : 1,
      description: typeof raw.description === 'string' ? raw.description : '',
      enabled: raw.enabled !== false,
      labels: isRecord(raw.labels) ? (raw.labels as Record<string, string>) : {},
      trigger,
      when,
      then: then as CompiledAction[],
      options,
      pos: this.#at.pos(this.#path),
      fieldReads: fieldTrieOf(this.#reads, kind === 'event' ? 'event' : 'contract'),
    };
  }

  /** The catalogue entries of the template whose values `event` or `contract` hold. */
  #triggerEntries(trigger: Trigger): PackageCatalogue['templates'] {
    if (trigger.kind !== 'schedule') return this.#catalogueEntries(trigger.template);
    return trigger.forEach === null ? [] : this.#catalogueEntries(trigger.forEach.template);
  }

  /** Reports the fields an expression reads that its template does not have (by the catalogue). */
  #checkFieldReads(reads: readonly ReadPath[], path: YamlPath, offset: number): void {
    if (this.#eventShape !== null) {
      for (const problem of unknownEventFieldReads(reads, this.#eventShape)) {
        this.#error(
          this.#at.valuePos(path, offset + problem.offset),
          'UNKNOWN_EVENT_FIELD',
          problem.message,
          problem.hint,
        );
      }
    }
    if (this.#valueTypes === null) return;
    for (const problem of unknownFieldReads(reads, this.#valueTypes)) {
      this.#error(
        this.#at.valuePos(path, offset + problem.offset),
        'UNKNOWN_FIELD',
        problem.message,
        problem.hint,
      );
    }
  }

  /** Reports Numeric and Int64 fields (text in CEL) used with number literals, by the catalogue. */
  #checkNumberOperands(operands: readonly NumberOperand[], path: YamlPath, offset: number): void {
    if (this.#valueTypes === null) return;
    for (const problem of numberTextOperands(operands, this.#valueTypes)) {
      this.#error(
        this.#at.valuePos(path, offset + problem.offset),
        'NUMERIC_AS_NUMBER',
        problem.message,
        problem.hint,
      );
    }
  }

  #p(...rest: YamlPath): YamlPath {
    return [...this.#path, ...rest];
  }

  #error(pos: SourcePos, code: RuleProblemCode, message: string, hint?: string): void {
    this.#ok = false;
    this.#ctx.problems.push({
      ...pos,
      code,
      severity: 'error',
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  }

  #warn(pos: SourcePos, code: RuleProblemCode, message: string, hint?: string): void {
    this.#ctx.problems.push({
      ...pos,
      code,
      severity: 'warning',
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  }

  #trigger(): Trigger | null {
    const raw = this.#raw;
    if (isRecord(raw.on)) {
      if (raw.forEach !== undefined) {
        this.#error(
          this.#at.pos(this.#p('forEach'), { key: true }),
          'TRIGGER',
          '`forEach` belongs to schedule rules',
          'an event rule reads the event itself (`event` in expressions); remove `forEach` or use `schedule:`',
        );
      }
      return this.#eventTrigger(raw.on);
    }
    if (isRecord(raw.schedule)) return this.#scheduleTrigger(raw.schedule);
    return null;
  }

  #eventTrigger(on: Record<string, unknown>): Trigger | null {
    const present = TRIGGER_KINDS.filter((k) => on[k] !== undefined);
    const kind = present[0];
    const party = this.#party(on.party, this.#p('on', 'party'));
    if (present.length !== 1 || kind === undefined || party === null) return null;
    const pos = this.#at.pos(this.#p('on', kind), { key: true });
    if (kind === 'exercised') {
      const ex = on.exercised;
      if (!isRecord(ex) || typeof ex.choice !== 'string') return null;
      const template = this.#templateRef(ex.template, this.#p('on', 'exercised', 'template'));
      if (template === null) return null;
      this.#checkChoice(template, ex.choice, this.#p('on', 'exercised', 'choice'));
      return {
        kind,
        template,
        choice: ex.choice,
        consuming: typeof ex.consuming === 'boolean' ? ex.consuming : null,
        party,
        pos,
      };
    }
    const template = this.#templateRef(on[kind], this.#p('on', kind));
    return template === null ? null : { kind, template, party, pos };
  }

  #scheduleTrigger(schedule: Record<string, unknown>): Trigger | null {
    if (typeof schedule.cron !== 'string') return null;
    const cronPath = this.#p('schedule', 'cron');
    const cronSpec = parseCron(schedule.cron);
    if ('problem' in cronSpec) {
      this.#error(
        this.#at.valuePos(cronPath, cronSpec.offset),
        'BAD_CRON',
        `bad cron expression "${schedule.cron}": ${cronSpec.problem}`,
        'e.g. "0 9 * * MON-FRI" is 9:00 on weekdays, "*/15 * * * *" every 15 minutes',
      );
    }
    const timezone = this.#timezone(schedule.timezone);
    let forEach: ForEach | null = null;
    const rawForEach = this.#raw.forEach;
    if (isRecord(rawForEach)) {
      const template = this.#templateRef(
        rawForEach.activeContracts,
        this.#p('forEach', 'activeContracts'),
      );
      const party = this.#party(rawForEach.party, this.#p('forEach', 'party'));
      if (template === null || party === null) return null;
      forEach = { template, party, pos: this.#at.pos(this.#p('forEach'), { key: true }) };
    }
    const jitterMs = this.#duration(schedule.jitter, this.#p('schedule', 'jitter'), 0);
    if ('problem' in cronSpec || timezone === null || jitterMs === null) return null;
    return {
      kind: 'schedule',
      cron: schedule.cron,
      cronSpec,
      timezone,
      forEach,
      catchUp: (schedule.catchUp as CatchUpPolicy | undefined) ?? 'last',
      maxCatchUp: typeof schedule.maxCatchUp === 'number' ? schedule.maxCatchUp : 10,
      jitterMs,
      pos: this.#at.pos(this.#p('schedule'), { key: true }),
    };
  }

  #timezone(raw: unknown): string | null {
    const zone = typeof raw === 'string' ? raw : 'UTC';
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    } catch {
      const guess = closestMatch(zone, Intl.supportedValuesOf('timeZone'));
      this.#error(
        this.#at.pos(this.#p('schedule', 'timezone')),
        'BAD_TIMEZONE',
        `unknown time zone "${zone}"`,
        guess !== undefined
          ? `did you mean "${guess}"?`
          : 'use an IANA time zone name such as Europe/Zurich, America/New_York or UTC',
      );
      return null;
    }
  }

  #duration(raw: unknown, path: YamlPath, fallback: number): number | null {
    if (typeof raw !== 'string') return fallback;
    try {
      return parseDuration(raw);
    } catch {
      // The schema's pattern already reported it.
      return null;
    }
  }

  #party(raw: unknown, path: YamlPath): string | null {
    if (typeof raw !== 'string') return null;
    const known = this.#ctx.parties;
    if (known !== undefined && !known.has(raw)) {
      const guess = closestMatch(raw, known);
      this.#error(
        this.#at.pos(path),
        'UNKNOWN_PARTY',
        `unknown party alias "${raw}"`,
        guess !== undefined
          ? `did you mean "${guess}"?`
          : known.size === 0
            ? 'the config defines no `parties:`; add the alias there'
            : `the config defines: ${[...known].sort().join(', ')}`,
      );
    }
    return raw;
  }

  #templateRef(raw: unknown, path: YamlPath): TemplateRef | null {
    if (typeof raw !== 'string') return null;
    const ref = parseTemplateRef(raw);
    if (ref === null) return null; // reported by the schema
    if (ref.form === 'package-id') {
      this.#warn(
        this.#at.pos(path),
        'PACKAGE_ID_REF',
        `"${raw}" names a package by id, which is deprecated`,
        `write "#<package-name>:${ref.qualifiedName}": package-name references keep matching after package upgrades`,
      );
    }
    const catalogue = this.#ctx.packages;
    // A package-id reference can only be checked when the catalogue knows package ids.
    const checkable =
      ref.form === 'package-name' || catalogue?.templates.some((t) => t.packageId !== undefined);
    if (catalogue !== undefined && checkable === true && this.#catalogueEntries(ref).length === 0) {
      const known = catalogue.templates.map((t) => `#${t.packageName}:${t.module}:${t.entity}`);
      const guess = closestMatch(
        ref.form === 'package-name' ? raw : `#x:${ref.qualifiedName}`,
        known,
      );
      this.#error(
        this.#at.pos(path),
        'UNKNOWN_TEMPLATE',
        `unknown template "${raw}": no known package has it`,
        guess !== undefined
          ? `did you mean "${guess}"?`
          : `known templates: ${known.slice(0, 10).join(', ')}`,
      );
    }
    return ref;
  }

  #catalogueEntries(ref: TemplateRef): PackageCatalogue['templates'] {
    return catalogueEntriesOf(this.#ctx.packages, ref);
  }

  #checkChoice(ref: TemplateRef, choice: string, path: YamlPath): void {
    if (hasTemplate(choice)) return; // reported as TEMPLATE_NOT_ALLOWED
    const entries = this.#catalogueEntries(ref);
    if (entries.length === 0) return; // unknown template reported already, or no catalogue
    const choices = new Set(entries.flatMap((t) => t.choices));
    if (choices.has(choice)) return;
    const guess = closestMatch(choice, choices);
    this.#error(
      this.#at.pos(path),
      'UNKNOWN_CHOICE',
      `template ${ref.qualifiedName} has no choice "${choice}"`,
      guess !== undefined
        ? `did you mean "${guess}"?`
        : `its choices: ${[...choices].sort().join(', ')}`,
    );
  }

  #when(variables: Variables, kind: RuleKind): CompiledCondition[] | null {
    const raw = this.#raw.when;
    if (raw === undefined) return [];
    const sources: { text: string; path: YamlPath }[] =
      typeof raw === 'string'
        ? [{ text: raw, path: this.#p('when') }]
        : Array.isArray(raw)
          ? raw.map((text: unknown, i) => ({ text: String(text), path: this.#p('when', i) }))
          : [];
    const out: CompiledCondition[] = [];
    for (const [index, { text, path }] of sources.entries()) {
      if (hasTemplate(text)) continue; // reported as TEMPLATE_NOT_ALLOWED
      const expression = this.#expression(text, path, 0, variables, kind);
      if (expression !== null) out.push({ ...expression, index });
    }
    return out.length === sources.length ? out : null;
  }

  #expression(
    source: string,
    path: YamlPath,
    offset: number,
    variables: Variables,
    kind: RuleKind,
  ): CompiledExpression | null {
    const pos = this.#at.valuePos(path, offset);
    if (source.length > RULE_LIMITS.EXPRESSION_MAX) {
      this.#error(
        pos,
        'CEL_TOO_COMPLEX',
        `the expression is ${source.length} characters long; at most ${RULE_LIMITS.EXPRESSION_MAX} are allowed`,
        'split it into several conditions (`when:` takes a list)',
      );
      return null;
    }
    try {
      const program = this.#ctx.cel.compile(source, variables, {
        maxComprehensionDepth: MAX_COMPREHENSION_DEPTH,
      });
      this.#reads.push(...program.reads);
      this.#checkFieldReads(program.reads, path, offset);
      this.#checkNumberOperands(program.numberOperands, path, offset);
      return { source, program, pos };
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      const tooComplex = error.summary.startsWith('comprehensions');
      // An error at the very end (a dangling operator) points after the last character.
      const at = Math.min(error.offset, source.trimEnd().length);
      this.#error(
        this.#at.valuePos(path, offset + at),
        tooComplex ? 'CEL_TOO_COMPLEX' : 'CEL_COMPILE_ERROR',
        `CEL: ${error.summary}`,
        celHint(error.summary, variables, kind),
      );
      return null;
    }
  }

  #value(raw: unknown, path: YamlPath, variables: Variables, kind: RuleKind): CompiledValue | null {
    if (typeof raw === 'string') {
      if (!hasTemplate(raw)) return { kind: 'literal', value: raw };
      const pieces = splitTemplate(raw);
      if (!Array.isArray(pieces)) {
        this.#error(
          this.#at.valuePos(path, pieces.offset),
          'BAD_TEMPLATE',
          pieces.problem,
          'write "${{ expression }}", e.g. "${{ event.contractId }}"',
        );
        return null;
      }
      const parts: (string | CompiledExpression)[] = [];
      for (const piece of pieces) {
        if (piece.kind === 'text') {
          parts.push(piece.text);
          continue;
        }
        const expression = this.#expression(piece.source, path, piece.offset, variables, kind);
        if (expression === null) return null;
        parts.push(expression);
      }
      const only = parts[0];
      if (parts.length === 1 && only !== undefined && typeof only !== 'string') {
        return { kind: 'expression', expression: only };
      }
      if (parts.every((p) => typeof p === 'string'))
        return { kind: 'literal', value: parts.join('') };
      return { kind: 'interpolation', parts, pos: this.#at.pos(path) };
    }
    if (Array.isArray(raw)) {
      const items = raw.map((x: unknown, i) => this.#value(x, [...path, i], variables, kind));
      if (items.some((x) => x === null)) return null;
      const compiled = items as CompiledValue[];
      if (compiled.every((x) => x.kind === 'literal')) {
        return { kind: 'literal', value: compiled.map((x) => (x as { value: JsonValue }).value) };
      }
      return { kind: 'list', items: compiled, pos: this.#at.pos(path) };
    }
    if (isRecord(raw)) {
      const fields: { name: string; value: CompiledValue }[] = [];
      let ok = true;
      for (const [name, v] of Object.entries(raw)) {
        const value = this.#value(v, [...path, name], variables, kind);
        if (value === null) ok = false;
        else fields.push({ name, value });
      }
      if (!ok) return null;
      if (fields.every((f) => f.value.kind === 'literal')) {
        return {
          kind: 'literal',
          value: Object.fromEntries(
            fields.map((f) => [f.name, (f.value as { value: JsonValue }).value]),
          ),
        };
      }
      return { kind: 'record', fields, pos: this.#at.pos(path) };
    }
    if (raw === undefined) return { kind: 'literal', value: null };
    // path: rules, i, then, j, <command>, <field>, ...: only Daml values take numbers as text.
    if (typeof raw === 'number' && DAML_VALUE_FIELDS.has(String(path[5]))) {
      return this.#number(raw, path);
    }
    return { kind: 'literal', value: raw as JsonValue };
  }

  /** A number in a command value: its exact text, as written (see daml-number-text.ts). */
  #number(raw: number, path: YamlPath): CompiledValue | null {
    const node = this.#at.node(path);
    const source = isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
    const text = (source === undefined ? null : yamlNumberText(source)) ?? numberText(raw);
    if (text !== null) return { kind: 'literal', value: text };
    this.#error(
      this.#at.pos(path),
      'BAD_VALUE',
      `${String(raw)} is not a number a Daml value can hold`,
      'Int64 and Numeric values are finite: write the number, e.g. 100 or 99.5',
    );
    return null;
  }

  #action(
    raw: unknown,
    index: number,
    variables: Variables,
    ruleKind: RuleKind,
  ): CompiledAction | null {
    if (!isRecord(raw)) return null;
    const path = this.#p('then', index);
    const kinds = COMMAND_KINDS.filter((k) => raw[k] !== undefined);
    const kind = kinds[0];
    const actAs = this.#aliases(raw.actAs, [...path, 'actAs']);
    const readAs = raw.readAs === undefined ? [] : this.#aliases(raw.readAs, [...path, 'readAs']);
    const workflowId =
      raw.workflowId === undefined
        ? null
        : this.#value(raw.workflowId, [...path, 'workflowId'], variables, ruleKind);
    const disclosedContracts =
      raw.disclosedContracts === undefined
        ? null
        : this.#value(raw.disclosedContracts, [...path, 'disclosedContracts'], variables, ruleKind);
    if (kinds.length !== 1 || kind === undefined) return null;
    const body = raw[kind];
    if (!isRecord(body)) return null;
    const bodyPath = [...path, kind];
    const template = this.#templateRef(body.template, [...bodyPath, 'template']);
    const value = (field: string): CompiledValue | null =>
      this.#value(
        body[field] ?? (field === 'choiceArgument' ? {} : undefined),
        [...bodyPath, field],
        variables,
        ruleKind,
      );
    if (template !== null && typeof body.choice === 'string') {
      this.#checkChoice(template, body.choice, [...bodyPath, 'choice']);
    }
    if (template !== null && kind === 'exerciseByKey') {
      const entries = this.#catalogueEntries(template);
      if (entries.length > 0 && entries.every((t) => t.hasKey === false)) {
        this.#error(
          this.#at.pos([...bodyPath, 'template']),
          'UNKNOWN_TEMPLATE',
          `template ${template.qualifiedName} has no contract key, so exerciseByKey cannot find its contracts`,
          'use `exercise` with a contractId instead',
        );
      }
    }
    const common = {
      index,
      actAs: actAs ?? [],
      readAs: readAs ?? [],
      workflowId,
      disclosedContracts,
      pos: this.#at.pos(path),
    };
    const choice = typeof body.choice === 'string' ? body.choice : '';
    switch (kind) {
      case 'create': {
        const createArguments = value('createArguments');
        if (template === null || createArguments === null) return null;
        return { ...common, kind, template, createArguments };
      }
      case 'createAndExercise': {
        const createArguments = value('createArguments');
        const choiceArgument = value('choiceArgument');
        if (template === null || createArguments === null || choiceArgument === null) return null;
        return { ...common, kind, template, createArguments, choice, choiceArgument };
      }
      case 'exercise': {
        const contractId = value('contractId');
        const choiceArgument = value('choiceArgument');
        if (template === null || contractId === null || choiceArgument === null) return null;
        return { ...common, kind, template, contractId, choice, choiceArgument };
      }
      case 'exerciseByKey': {
        const contractKey = value('contractKey');
        const choiceArgument = value('choiceArgument');
        if (template === null || contractKey === null || choiceArgument === null) return null;
        return { ...common, kind, template, contractKey, choice, choiceArgument };
      }
    }
  }

  #aliases(raw: unknown, path: YamlPath): string[] | null {
    if (typeof raw === 'string') return this.#party(raw, path) === null ? null : [raw];
    if (!Array.isArray(raw)) return null;
    const out: string[] = [];
    raw.forEach((alias: unknown, i) => {
      if (this.#party(alias, [...path, i]) !== null) out.push(alias as string);
    });
    return out.length === raw.length ? out : null;
  }

  #options(): RuleOptions | null {
    const retry = isRecord(this.#raw.retry) ? this.#raw.retry : {};
    const rate = isRecord(this.#raw.rateLimit) ? this.#raw.rateLimit : {};
    const path = this.#p('retry');
    // The schema's defaults are already filled in, so the YAML document tells what the user wrote.
    const base = this.#ctx.defaultRetry;
    const written = (key: string): boolean => this.#at.node([...path, key]) !== undefined;
    const pick = <T>(key: string, value: T, fallback: T | undefined): T =>
      written(key) || fallback === undefined ? value : fallback;
    const initialDelayMs = pick(
      'initialDelay',
      this.#duration(retry.initialDelay, [...path, 'initialDelay'], 1000),
      base?.initialDelayMs,
    );
    const maxDelayMs = pick(
      'maxDelay',
      this.#duration(retry.maxDelay, [...path, 'maxDelay'], 60_000),
      base?.maxDelayMs,
    );
    const deadlineMs = pick(
      'deadline',
      this.#duration(retry.deadline, [...path, 'deadline'], 600_000),
      base?.deadlineMs,
    );
    if (initialDelayMs === null || maxDelayMs === null || deadlineMs === null) return null;
    if (maxDelayMs < initialDelayMs) {
      this.#error(
        this.#at.pos([...path, 'maxDelay']),
        'BAD_VALUE',
        `retry.maxDelay (${String(retry.maxDelay)}) is shorter than retry.initialDelay (${typeof retry.initialDelay === 'string' ? retry.initialDelay : '1s'})`,
        'maxDelay caps the growing delay between retries, so it is at least initialDelay',
      );
      return null;
    }
    return {
      retry: {
        maxAttempts: pick(
          'maxAttempts',
          typeof retry.maxAttempts === 'number' ? retry.maxAttempts : 5,
          base?.maxAttempts,
        ),
        initialDelayMs,
        maxDelayMs,
        deadlineMs,
      },
      rateLimit: {
        perSecond: typeof rate.perSecond === 'number' ? rate.perSecond : 10,
        burst: typeof rate.burst === 'number' ? rate.burst : 20,
      },
      concurrency: typeof this.#raw.concurrency === 'number' ? this.#raw.concurrency : 4,
    };
  }
}
