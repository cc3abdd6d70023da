import type { CelProgram } from './cel/cel-program.js';
import type { FieldTrie } from './field-reads.js';
import type { RuleProblem } from './rule-problem.js';
import type { RuleOptions } from './rule-options.js';

/**
 * The compiled, frozen form of rule files (language version 1). `loadRules` produces it once at
 * load time; evaluation only reads it. Every object reachable from a `RuleSet` is frozen.
 *
 * Positions are 1-based and point into the rule file as the user wrote it, so evaluation errors
 * and explanations can say `file:line:col` too.
 */

/** A place in a rule file. */
export type SourcePos = {
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column (in UTF-16 code units, as editors count them). */
  readonly col: number;
};

/**
 * A template (or interface) reference as written in a rule, parsed.
 *
 * - `package-name` form, `#invoices:Invoice:Invoice` (the recommended one): matches any version
 *   of the package, by `packageName` + module + entity, because events carry the package-id form.
 * - `package-id` form, `<hex>:Invoice:Invoice`: pins one package version; loading warns that it is
 *   deprecated. It matches an event whose templateId has that package id, module and entity.
 */
export type TemplateRef =
  | {
      readonly form: 'package-name';
      /** Exactly as written, e.g. "#invoices:Invoice:Invoice"; usable as a command's templateId. */
      readonly text: string;
      readonly packageName: string;
      /** Dotted module path, e.g. "Invoice" or "Finance.Invoice". */
      readonly module: string;
      readonly entity: string;
      /** `module:entity`, e.g. "Invoice:Invoice": the part every event's templateId ends with. */
      readonly qualifiedName: string;
    }
  | {
      readonly form: 'package-id';
      readonly text: string;
      readonly packageId: string;
      readonly module: string;
      readonly entity: string;
      readonly qualifiedName: string;
    };

/**
 * What a reference names. The catalogue says which (a reference it does not know is taken as a
 * template); `interface:` in `exercised` triggers and `exercise` actions says it explicitly.
 * Interface rules match events by the interface ids they carry (interfaceViews,
 * implementedInterfaces, interfaceId) and see the interface view as `event.view` /
 * `contract.view`; the runtime subscribes to them with an InterfaceFilter.
 */
export type RefKind = 'template' | 'interface';

/** Trigger of a rule that reacts to a contract of `template` being created or archived. */
type ContractTrigger<K extends 'created' | 'archived'> = {
  readonly kind: K;
  /** The template, or the interface (`refKind`), as written. */
  readonly template: TemplateRef;
  readonly refKind: RefKind;
  /** Party alias (a key of bot.config.yaml `parties:`) whose view of the ledger the rule reads. */
  readonly party: string;
  readonly pos: SourcePos;
};

/** Trigger of a rule that reacts to a created contract of `template`, seen by `party`. */
export type CreatedTrigger = ContractTrigger<'created'>;

/** Trigger of a rule that reacts to an exercise of `choice` on `template`. */
export type ExercisedTrigger = {
  readonly kind: 'exercised';
  /** The template, or with `refKind: 'interface'` the interface whose choice is exercised. */
  readonly template: TemplateRef;
  readonly refKind: RefKind;
  readonly choice: string;
  /** Only consuming (true) or non-consuming (false) exercises; null matches both. */
  readonly consuming: boolean | null;
  readonly party: string;
  readonly pos: SourcePos;
};

/** Trigger of a rule that reacts to an archived contract of `template`. */
export type ArchivedTrigger = ContractTrigger<'archived'>;

/** What a schedule rule iterates over in each slot: the active contracts of `template` for `party`. */
export type ForEach = {
  /** The template, or the interface (`refKind`), whose active contracts are read. */
  readonly template: TemplateRef;
  readonly refKind: RefKind;
  readonly party: string;
  /**
   * Null: the rule fires once per contract `when` selects (`contract` in `then`). Otherwise it
   * fires once per batch of them (`contracts` in `then`): see BatchSpec.
   */
  readonly batch: BatchSpec | null;
  readonly pos: SourcePos;
};

/**
 * `forEach.batch`: `when` selects contracts one by one (`contract` in scope), and `then` runs
 * once per batch of up to `size` selected contracts, in the order the active contract set is
 * read, with the list as `contracts`. A batch of fewer than `min` (only the last of a group can
 * be) does not fire. With `groupBy`, contracts whose `groupBy` values are equal are batched
 * together, each group in its own batches. A batch's trigger key is the slot and its first
 * contract's id, so re-running a slot at the same snapshot offset gives the same commandIds.
 */
export type BatchSpec = {
  /** At most this many contracts per batch (default 100). */
  readonly size: number;
  /** A batch of fewer contracts does not fire (default 1). */
  readonly min: number;
  /** Over `contract`: the group a selected contract is batched in; null: one group. */
  readonly groupBy: CompiledExpression | null;
  readonly pos: SourcePos;
};

/**
 * Misfire policy of a schedule (issue 6): after downtime, run no missed slot, only the last one,
 * or all of them (at most `maxCatchUp`).
 */
export type CatchUpPolicy = 'none' | 'last' | 'all';

/** Trigger of a rule that runs on a cron schedule. */
export type ScheduleTrigger = {
  readonly kind: 'schedule';
  /**
   * The cron expression as written (5 fields: minute hour day-of-month month day-of-week, or 6
   * with a second field first).
   */
  readonly cron: string;
  /** The parsed cron expression. */
  readonly cronSpec: CronSpec;
  /** IANA time zone the cron fields are read in (default "UTC"). */
  readonly timezone: string;
  /**
   * The contracts each slot iterates over (`contract` in CEL). Null: the rule's actions fire once
   * per slot, without a contract.
   */
  readonly forEach: ForEach | null;
  /** Default 'last'. */
  readonly catchUp: CatchUpPolicy;
  /** Upper bound on slots run when catching up with 'all' (default 10). */
  readonly maxCatchUp: number;
  /** Random delay, up to this many ms, added to each slot to spread load (default 0). */
  readonly jitterMs: number;
  readonly pos: SourcePos;
};

export type EventTrigger = CreatedTrigger | ExercisedTrigger | ArchivedTrigger;
export type Trigger = EventTrigger | ScheduleTrigger;

/**
 * A parsed cron expression: the allowed values of each field, sorted ascending. `seconds` is
 * `[0]` for a classic 5-field expression.
 * `dayOfWeek` uses 0 = Sunday … 6 = Saturday (7 is folded into 0). As in classic cron, when both
 * day fields are restricted (neither is `*`), a day matches if EITHER matches.
 */
export type CronSpec = {
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  readonly daysOfWeek: readonly number[];
  /** Whether day-of-month / day-of-week were written as `*` (unrestricted). */
  readonly dayOfMonthStar: boolean;
  readonly dayOfWeekStar: boolean;
};

/**
 * One compiled CEL expression with its place in the file. `pos` is where the expression text
 * starts, so a runtime error can point at the rule.
 */
export type CompiledExpression = {
  readonly source: string;
  readonly program: CelProgram;
  readonly pos: SourcePos;
};

/**
 * One condition of `when`. `when` may be a single expression or a list of expressions that must
 * all be true; explanations report each condition's result separately.
 */
export type CompiledCondition = CompiledExpression & { readonly index: number };

/**
 * A value in an action's arguments, with its `${{ }}` templates compiled.
 * - `literal`: a subtree without templates, kept as plain JSON (already frozen).
 * - `expression`: a string that is exactly one `${{ expr }}`: the expression's value replaces it,
 *   keeping its type (a list stays a list, an int stays an int, a Decimal becomes its string).
 * - `interpolation`: a string with templates inside: each expression's value is rendered as text
 *   and spliced in (strings as-is, Decimal/int/double/bool/timestamp as their text).
 * - `list` / `record`: containers with at least one template somewhere below.
 */
export type CompiledValue =
  | { readonly kind: 'literal'; readonly value: JsonValue }
  | {
      readonly kind: 'expression';
      readonly expression: CompiledExpression;
      /**
       * How the value is sent where the packages give the field's Daml type (resolved when the
       * rule is loaded): a timestamp in a Date field as its day, a decimal in an Int as a whole
       * number, … (see render-value.ts). Absent: the type is unknown, or nothing converts.
       */
      readonly rendering?: DamlRendering;
    }
  | {
      readonly kind: 'interpolation';
      /** Alternating text and expressions, in order; text parts may be empty strings. */
      readonly parts: readonly (string | CompiledExpression)[];
      readonly pos: SourcePos;
    }
  | { readonly kind: 'list'; readonly items: readonly CompiledValue[]; readonly pos: SourcePos }
  | {
      readonly kind: 'record';
      readonly fields: readonly { readonly name: string; readonly value: CompiledValue }[];
      readonly pos: SourcePos;
    };

/**
 * The Daml type a `${{ }}` value is sent as, reduced to what changes how a CEL value is written:
 * Date, Time, Int and Numeric scalars, and the containers that hold them (an Optional, a list, a
 * TextMap, a record's fields, a variant's constructors). A part not described is sent as any
 * value is (render-value.ts). Values that are text already (read from the ledger) are sent as
 * they are.
 */
export type DamlRendering =
  | { readonly kind: 'Date' }
  | { readonly kind: 'Time' }
  | { readonly kind: 'Int' }
  | { readonly kind: 'Numeric'; readonly scale: number }
  | { readonly kind: 'Optional'; readonly of: DamlRendering }
  | { readonly kind: 'List'; readonly of: DamlRendering }
  | { readonly kind: 'TextMap'; readonly of: DamlRendering }
  /** By field name. */
  | { readonly kind: 'Record'; readonly parts: ReadonlyMap<string, DamlRendering> }
  /** By constructor name: how the variant's `value` is sent. */
  | { readonly kind: 'Variant'; readonly parts: ReadonlyMap<string, DamlRendering> };

export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** What every action has besides its command. */
export type ActionCommon = {
  /** 0-based position in `then`; part of the commandId. */
  readonly index: number;
  /** Party aliases to act as (non-empty). */
  readonly actAs: readonly string[];
  /** Extra party aliases to read as (may be empty). */
  readonly readAs: readonly string[];
  /** Workflow id of the submission (may use `${{ }}`); null leaves it unset. */
  readonly workflowId: CompiledValue | null;
  /**
   * Disclosed contracts (explicit disclosure): a compiled list whose items evaluate to
   * `{contractId, createdEventBlob, templateId?, synchronizerId?}` objects. Null: none.
   */
  readonly disclosedContracts: CompiledValue | null;
  readonly pos: SourcePos;
};

export type CreateAction = ActionCommon & {
  readonly kind: 'create';
  readonly template: TemplateRef;
  readonly createArguments: CompiledValue;
};

export type ExerciseAction = ActionCommon & {
  readonly kind: 'exercise';
  /** The template, or with `refKind: 'interface'` the interface (sent as the command's templateId). */
  readonly template: TemplateRef;
  readonly refKind: RefKind;
  readonly contractId: CompiledValue;
  readonly choice: string;
  readonly choiceArgument: CompiledValue;
};

export type ExerciseByKeyAction = ActionCommon & {
  readonly kind: 'exerciseByKey';
  readonly template: TemplateRef;
  readonly contractKey: CompiledValue;
  readonly choice: string;
  readonly choiceArgument: CompiledValue;
};

export type CreateAndExerciseAction = ActionCommon & {
  readonly kind: 'createAndExercise';
  readonly template: TemplateRef;
  readonly createArguments: CompiledValue;
  readonly choice: string;
  readonly choiceArgument: CompiledValue;
};

export type CompiledAction =
  CreateAction | ExerciseAction | ExerciseByKeyAction | CreateAndExerciseAction;

/** One compiled rule. */
export type CompiledRule = {
  /** ASCII slug, unique across all loaded files; part of every commandId. */
  readonly id: string;
  /** Bumped by users only to re-fire on purpose; part of every commandId (default 1). */
  readonly revision: number;
  readonly description: string;
  /** Disabled rules are compiled and validated but never fire (default true). */
  readonly enabled: boolean;
  /** Free-form string labels (for metrics and selection). */
  readonly labels: Readonly<Record<string, string>>;
  readonly trigger: Trigger;
  /** All must be true for the rule to fire; empty means always. */
  readonly when: readonly CompiledCondition[];
  /** Non-empty. */
  readonly then: readonly CompiledAction[];
  readonly options: RuleOptions;
  /** Where the rule starts (its `- id:` list item). */
  readonly pos: SourcePos;
  /**
   * The Daml-value fields its expressions read below `event` (event rules) or `contract`
   * (schedule rules): each one a record lacks reads `null` (see field-reads.ts). Absent or null:
   * none.
   */
  readonly fieldReads?: FieldTrie | null;
};

/**
 * Everything `loadRules` compiled. `rules` is in file order (files in the order given). Rules
 * with errors are left out; `warnings` are the non-fatal problems of the rules that are in.
 */
export type RuleSet = {
  readonly rules: readonly CompiledRule[];
  readonly warnings: readonly RuleProblem[];
};

/**
 * The CEL variables in scope, by rule kind. Every variable is of dynamic type; field access on a
 * missing field is an evaluation error (reported per event, never fatal).
 *
 * - `event` (event rules): the ledger event (CreatedEvent, ExercisedEvent or ArchivedEvent fields
 *   as on the wire: `contractId`, `templateId`, `packageName`, `createArgument`, `choice`,
 *   `choiceArgument`, `exerciseResult`, `actingParties`, `signatories`, ...) plus the transaction's
 *   `updateId`, `offset`, `recordTime`, `effectiveAt` (timestamps) and `workflowId`.
 * - `contract` (schedule rules with `forEach` only): the active contract's CreatedEvent fields
 *   (`contractId`, `templateId`, `packageName`, `createArgument`, `createdAt`, `signatories`, ...).
 * - `contracts` (the `then` of a rule with `forEach.batch`, instead of `contract`): the batch, a
 *   list of such contracts.
 * - `parties`: map of party alias → party id, from the bot config.
 * - `rule`: `{id, revision, description, labels}` of the rule being evaluated.
 * - `now`: a timestamp given to evaluation (the slot time for schedules, the evaluation input for
 *   events); never read from a clock.
 * - `today`: `now` truncated to midnight UTC (for schedules: midnight UTC of the slot's calendar
 *   day in the rule's time zone), comparable with `date("…")`.
 */
export const EVENT_RULE_VARIABLES = ['event', 'parties', 'rule', 'now', 'today'] as const;
export const SCHEDULE_RULE_VARIABLES = ['contract', 'parties', 'rule', 'now', 'today'] as const;
/** A schedule rule without `forEach` has no `contract`. */
export const SLOT_RULE_VARIABLES = ['parties', 'rule', 'now', 'today'] as const;
/**
 * The `then` of a rule with `forEach.batch`: `contracts`, the batch (a list of what `contract`
 * is in its `when`), instead of `contract`.
 */
export const BATCH_RULE_VARIABLES = ['contracts', 'parties', 'rule', 'now', 'today'] as const;
