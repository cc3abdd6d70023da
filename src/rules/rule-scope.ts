import { parseDuration } from '../core/duration.js';
import { closestMatch } from '../core/source/closest-match.js';
import type { CatalogueEntry, PackageCatalogue } from '../daml-lf/package-catalogue.js';
import type { YamlLocator, YamlPath } from '../core/yaml-locator.js';
import { CelCompileError } from './cel/cel-compile-error.js';
import type { CelEnvironment } from './cel/cel-environment.js';
import type { CelProgramCache } from './cel-program-cache.js';
import { asContractReads } from './batch-reads.js';
import type { CelProgram } from './cel/cel-program.js';
import { EVERY_ITEM, type Guard, type ReadPath } from './cel/read-paths.js';
import { celHint, type RuleKind, type Variables } from './cel-hint.js';
import type { CompiledExpression, SourcePos, Trigger } from './compiled-rule.js';
import type { RetryOptions } from './rule-options.js';
import { eventShapeOf, hasInterfaceView, type EventShape } from './event-fields.js';
import { checkExpression } from './expression-checks.js';
import type { RuleProblem, RuleProblemCode } from './rule-problem.js';
import { RULE_LIMITS } from './rule-language.js';
import { valueRootTypes, type ValueRootTypes } from './unknown-field-reads.js';

/** Comprehension macros (all, exists, map, filter) may nest this deep; their cost multiplies. */
const MAX_COMPREHENSION_DEPTH = 2;

/** What every rule of one load shares: the environment, the config's names, the problems. */
export type RuleFileContext = {
  readonly cel: CelEnvironment;
  /** The programs of the load before (same environment), when the caller keeps them. */
  readonly programs?: CelProgramCache | undefined;
  readonly parties: ReadonlySet<string> | undefined;
  readonly packages: PackageCatalogue | undefined;
  readonly maxFileBytes: number;
  readonly defaultRetry: RetryOptions | undefined;
  readonly problems: RuleProblem[];
};

/**
 * One rule being compiled: its raw (schema-checked) mapping, where it sits, and the checks every
 * part of it shares: party aliases, template references and choices against the catalogue, CEL
 * expressions and the fields they read. Any error makes the rule fail (`ok` turns false).
 */
export class RuleScope {
  readonly raw: Record<string, unknown>;
  readonly path: YamlPath;
  readonly at: YamlLocator;
  readonly file: RuleFileContext;
  /** Every field path the rule's expressions read (see field-reads.ts). */
  readonly reads: ReadPath[] = [];
  #ok = true;
  /** The catalogue's types of the Daml values the rule reads; null when unknown. */
  #valueTypes: ValueRootTypes | null = null;
  /** What `event` (or `contract`) holds, from the trigger; null when unknown or absent. */
  #eventShape: EventShape | null = null;
  /** Whether `event` (or `contract`) has the interface view `view`. */
  #eventView = false;
  /** The trigger's reference when no package says what it names (see ExpressionContext). */
  #mayBeInterface: string | null = null;
  /** The guards of the `when` conditions compiled so far (see expression-types.ts). */
  readonly #whenGuards: Guard[] = [];

  constructor(
    raw: Record<string, unknown>,
    path: YamlPath,
    at: YamlLocator,
    file: RuleFileContext,
  ) {
    this.raw = raw;
    this.path = path;
    this.at = at;
    this.file = file;
  }

  /** The catalogue's types of the Daml values `event` or `contract` holds; null when unknown. */
  get valueTypes(): ValueRootTypes | null {
    return this.#valueTypes;
  }

  /** False once any error was reported for this rule. */
  get ok(): boolean {
    return this.#ok;
  }

  /**
   * Lets later expressions be checked against what the trigger's template or interface holds;
   * `entries`: its catalogue entries (every package version), empty when unknown.
   */
  setTrigger(trigger: Trigger, entries: readonly CatalogueEntry[]): void {
    const catalogue = this.file.packages;
    this.#valueTypes = catalogue === undefined ? null : valueRootTypes(catalogue, trigger, entries);
    this.#eventShape = eventShapeOf(trigger);
    this.#eventView = hasInterfaceView(trigger);
    // A `created` or `forEach` reference is taken as a template when no package knows it (a
    // known one has entries, an unknown name in a known package is an error).
    const ref =
      trigger.kind === 'created'
        ? trigger.template
        : trigger.kind === 'schedule'
          ? trigger.forEach?.template
          : undefined;
    this.#mayBeInterface =
      ref !== undefined && entries.length === 0 && !this.#eventView ? ref.text : null;
  }

  p(...rest: YamlPath): YamlPath {
    return [...this.path, ...rest];
  }

  error(pos: SourcePos, code: RuleProblemCode, message: string, hint?: string): void {
    this.#ok = false;
    this.#report('error', pos, code, message, hint);
  }

  warn(pos: SourcePos, code: RuleProblemCode, message: string, hint?: string): void {
    this.#report('warning', pos, code, message, hint);
  }

  #report(
    severity: RuleProblem['severity'],
    pos: SourcePos,
    code: RuleProblemCode,
    message: string,
    hint: string | undefined,
  ): void {
    this.file.problems.push({
      ...pos,
      code,
      severity,
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  }

  duration(raw: unknown, path: YamlPath, fallback: number): number | null {
    if (typeof raw !== 'string') return fallback;
    try {
      return parseDuration(raw);
    } catch {
      // The schema's pattern already reported it.
      return null;
    }
  }

  party(raw: unknown, path: YamlPath): string | null {
    if (typeof raw !== 'string') return null;
    this.#knownAlias(raw, this.at.pos(path));
    return raw;
  }

  /** Reports `alias` when the config's `parties:` are known and it is not one of them. */
  #knownAlias(alias: string, pos: SourcePos): void {
    const known = this.file.parties;
    if (known === undefined || known.has(alias)) return;
    const guess = closestMatch(alias, known);
    this.error(
      pos,
      'UNKNOWN_PARTY',
      `unknown party alias "${alias}"`,
      guess !== undefined
        ? `did you mean "${guess}"?`
        : known.size === 0
          ? 'the config defines no `parties:`; add the alias there'
          : `the config defines: ${[...known].sort().join(', ')}`,
    );
  }

  aliases(raw: unknown, path: YamlPath): string[] | null {
    if (typeof raw === 'string') return this.party(raw, path) === null ? null : [raw];
    if (!Array.isArray(raw)) return null;
    const out: string[] = [];
    raw.forEach((alias: unknown, i) => {
      if (this.party(alias, [...path, i]) !== null) out.push(alias as string);
    });
    return out.length === raw.length ? out : null;
  }

  expression(
    source: string,
    path: YamlPath,
    offset: number,
    variables: Variables,
    kind: RuleKind,
  ): CompiledExpression | null {
    const pos = this.at.valuePos(path, offset);
    if (source.length > RULE_LIMITS.EXPRESSION_MAX) {
      this.error(
        pos,
        'CEL_TOO_COMPLEX',
        `the expression is ${source.length} characters long; at most ${RULE_LIMITS.EXPRESSION_MAX} are allowed`,
        'split it into several conditions (`when:` takes a list)',
      );
      return null;
    }
    try {
      const options = { maxComprehensionDepth: MAX_COMPREHENSION_DEPTH };
      const compiled =
        this.file.programs?.compile(source, variables, options) ??
        this.file.cel.compile(source, variables, options);
      const program = variables.includes('contracts') ? asContractReads(compiled) : compiled;
      this.reads.push(...program.reads);
      this.#check(program, path, offset);
      return { source, program, pos };
    } catch (error) {
      if (!(error instanceof CelCompileError)) throw error;
      const tooComplex = error.summary.startsWith('comprehensions');
      // An error at the very end (a dangling operator) points after the last character.
      const at = Math.min(error.offset, source.trimEnd().length);
      this.error(
        this.at.valuePos(path, offset + at),
        tooComplex ? 'CEL_TOO_COMPLEX' : 'CEL_COMPILE_ERROR',
        `CEL: ${error.summary}`,
        celHint(error.summary, variables, kind),
      );
      return null;
    }
  }

  /** The checks of a compiled expression against the trigger's types (expression-checks.ts). */
  #check(program: CelProgram, path: YamlPath, offset: number): void {
    const isWhen = path[2] === 'when';
    const found = checkExpression(program, {
      eventShape: this.#eventShape,
      eventView: this.#eventView,
      mayBeInterface: this.#mayBeInterface,
      valueTypes: this.#valueTypes,
      guards: [...this.#whenGuards, ...program.guards],
    });
    if (isWhen) this.#whenGuards.push(...program.guards);
    // `parties.payr` would fail at every event the rule reaches: the aliases are known here.
    for (const read of program.reads) {
      const alias = read.segments[0];
      if (read.variable !== 'parties' || alias === undefined || alias.name === EVERY_ITEM) continue;
      this.#knownAlias(alias.name, this.at.valuePos(path, offset + alias.offset));
    }
    for (const problem of found) {
      const pos = this.at.valuePos(path, offset + problem.offset);
      if (problem.severity === 'warning')
        this.warn(pos, problem.code, problem.message, problem.hint);
      else this.error(pos, problem.code, problem.message, problem.hint);
    }
  }
}
