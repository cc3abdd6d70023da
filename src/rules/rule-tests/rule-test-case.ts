import type { CreatedEvent, Event } from '../../ledger/wire/wire-types.js';
import type { SourcePos } from '../compiled-rule.js';
import type { TransactionInfo } from '../evaluate.js';
import type { RuleProblem } from '../rule-problem.js';

/*
 * Rule unit tests (`ledgerbot test`): `promtool test rules` for ledger rules. A test file names
 * rule files and parties, then cases: given these events (or, for schedule rules, this slot and
 * these active contracts), expect these commands, or none, or these rule errors.
 *
 *   rules: ../rules                     # files or directories, relative to this file
 *   parties: { payer: "Payer::1220aa", issuer: "Issuer::1220bb" }
 *   now: "2025-03-03T09:30:00Z"         # optional default for every case
 *   tests:
 *     - name: the payer accepts a small invoice
 *       given:
 *         - created:
 *             template: "#invoices:Invoice:Invoice"
 *             createArgument: { amount: "999.99", currency: USD }
 *       expect:
 *         - rule: accept-small-invoices
 *           createAndExercise: { choice: AcceptInvoice }
 *           actAs: [payer]
 *
 * Pure: parsing takes the text, running takes the loaded rules; the CLI does the reading.
 */

/** The kinds of event a `given:` item can be. */
export const RULE_TEST_KINDS = ['created', 'exercised', 'archived'] as const;

/** The rule-language command kinds an expectation may name, with their wire keys. */
export const EXPECTED_COMMAND_KINDS = {
  createAndExercise: 'CreateAndExerciseCommand',
  create: 'CreateCommand',
  exercise: 'ExerciseCommand',
  exerciseByKey: 'ExerciseByKeyCommand',
} as const;
export type CommandKind = keyof typeof EXPECTED_COMMAND_KINDS;

export type ExpectedCommand = {
  readonly pos: SourcePos;
  readonly rule: string | null;
  /** Rule-language kind and fields (template, choice, createArguments, ...), matched partially. */
  readonly command: { readonly kind: CommandKind; readonly fields: Record<string, unknown> } | null;
  readonly actAs: readonly string[] | null;
  readonly readAs: readonly string[] | null;
  readonly workflowId: string | null;
  readonly commandId: string | null;
};

export type ExpectedError = {
  readonly pos: SourcePos;
  readonly rule: string;
  /** A part of the message that must appear. */
  readonly message: string | null;
  readonly code: string | null;
};

export type GivenEvent = {
  readonly pos: SourcePos;
  readonly transaction: TransactionInfo;
  readonly event: Event;
};

export type RuleTestCase = {
  readonly name: string;
  readonly pos: SourcePos;
  readonly now: Date;
  /** Event cases: each event is its own transaction, evaluated in order. */
  readonly given: readonly GivenEvent[];
  /** Schedule cases: the slot time (also `now`), or null for an event case. */
  readonly slot: Date | null;
  /** Schedule rules the slot runs; null: all of them. */
  readonly slotRules: readonly string[] | null;
  readonly contracts: readonly CreatedEvent[];
  readonly snapshotOffset: number;
  readonly expect: readonly ExpectedCommand[] | null;
  readonly expectErrors: readonly ExpectedError[] | null;
};

export type RuleTestFile = {
  readonly path: string;
  /** Rule files or directories as written (relative to the test file). */
  readonly rules: readonly string[];
  /** Where `rules:` is written, for problems reading them. */
  readonly rulesPos: SourcePos;
  readonly parties: Readonly<Record<string, string>>;
  readonly cases: readonly RuleTestCase[];
  /**
   * The package name of each made-up package id the file's events carry (a `#name` reference
   * becomes `testPackageId(name)`), so interface ids match `#name` rules as on a ledger.
   */
  readonly packageNames: ReadonlyMap<string, string>;
};

export type ParsedRuleTestFile =
  | { readonly ok: true; readonly file: RuleTestFile }
  | { readonly ok: false; readonly problems: readonly RuleProblem[] };

/** `now` of a case that gives none, and of its events. */
export const DEFAULT_NOW = '2025-01-01T00:00:00Z';
