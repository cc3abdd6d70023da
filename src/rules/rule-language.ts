/**
 * The fixed vocabulary of rule files (language version 1): the patterns, the limits and the kinds
 * of triggers and commands, shared by the schema (rules-schema.ts) and the loader's messages.
 */
/** Patterns shared by the schema and the loader's messages. */
export const RULE_PATTERNS = {
  /** Lowercase ASCII slug: LedgerString-safe, so the commandId `lb-<id>-<hash>` stays valid. */
  RULE_ID: '^[a-z0-9][a-z0-9_-]*$',
  /** `#package-name:Module.Path:Entity`, or the deprecated `<package-id>:Module.Path:Entity`. */
  TEMPLATE_REF:
    '^(#[A-Za-z0-9][A-Za-z0-9._-]*|[0-9a-f]{64}):[A-Z][A-Za-z0-9_]*(\\.[A-Z][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$',
  /** Daml identifiers (choice names, party aliases follow config keys). */
  CHOICE: '^[A-Za-z_][A-Za-z0-9_]*$',
  PARTY_ALIAS: '^[A-Za-z_][A-Za-z0-9_-]*$',
  DURATION: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h|d|w))+$',
  LABEL_KEY: '^[A-Za-z_][A-Za-z0-9_.-]*$',
} as const;

/** Limits of the language, each with an error that names it. */
export const RULE_LIMITS = {
  /** `lb-` + id + `-` + 64 hex chars must fit in a 255-character LedgerString. */
  RULE_ID_MAX: 128,
  DESCRIPTION_MAX: 1000,
  EXPRESSION_MAX: 4000,
  RULES_PER_FILE_MAX: 10_000,
  ACTIONS_PER_RULE_MAX: 100,
  /** A retry policy's attempts; the config's `submission.retry` (the rules' default) has the same cap. */
  RETRY_ATTEMPTS_MAX: 1000,
  /** Contracts in one `forEach.batch` (one command carries them all). */
  BATCH_SIZE_MAX: 1000,
  /**
   * Selected contracts a slot holds while their groups (`batch.groupBy`) fill; beyond it, the
   * group open longest fires early. Bounds a slot's memory whatever the number of groups.
   */
  BATCH_PENDING_MAX: 10_000,
} as const;

export const COMMAND_KINDS = ['createAndExercise', 'create', 'exercise', 'exerciseByKey'] as const;
export const TRIGGER_KINDS = ['created', 'exercised', 'archived'] as const;
