/**
 * The columns of an intent row that every journal schema has, in the order the stores' writers
 * bind them, each with its SQL type. The PostgreSQL store declares its arrays with these types;
 * SQLite stores the same values by affinity, so it needs only the names. Both stores name the
 * columns from here, and from NEWER_INTENT_COLUMNS, so a column added to one cannot be missed
 * by the other.
 */
export const INTENT_COLUMNS = [
  ['command_id', 'text'],
  ['user_id', 'text'],
  ['act_as', 'text'],
  ['rule_id', 'text'],
  ['revision', 'integer'],
  ['action_index', 'integer'],
  ['trigger_kind', 'text'],
  ['trigger_update_id', 'text'],
  ['trigger_node_id', 'bigint'],
  ['trigger_slot', 'bigint'],
  ['trigger_contract_id', 'text'],
  ['justifying_offset', 'bigint'],
  ['payload', 'text'],
  ['event', 'text'],
  ['state', 'text'],
  ['attempts', 'integer'],
  ['submission_id', 'text'],
  ['last_error', 'text'],
  ['next_attempt_at', 'bigint'],
  ['deadline', 'bigint'],
  ['created_at', 'bigint'],
  ['updated_at', 'bigint'],
  ['completion_offset', 'bigint'],
  ['completion_update_id', 'text'],
] as const;

/**
 * Intent columns added after the first schema (SQLite files: `in_doubt` since version 2,
 * `attempt_log` since 5; an older file the migration tests open lacks them). They change with
 * the intent's state.
 */
export const NEWER_INTENT_COLUMNS = [
  ['in_doubt', 'smallint'],
  ['attempt_log', 'text'],
] as const;

/** The names of INTENT_COLUMNS, in their order. */
export const INTENT_COLUMN_NAMES = INTENT_COLUMNS.map(([c]) => c);

/**
 * The columns of INTENT_COLUMNS that a state change may change, in their order: the others are
 * the intent's facts, written once, with the intent.
 */
export const MUTABLE_INTENT_COLUMNS = [
  'state',
  'attempts',
  'submission_id',
  'last_error',
  'next_attempt_at',
  'deadline',
  'updated_at',
  'completion_offset',
  'completion_update_id',
] as const;

export type MutableIntentColumn = (typeof MUTABLE_INTENT_COLUMNS)[number];

const MUTABLE = new Set<string>(MUTABLE_INTENT_COLUMNS);

/** The facts of an intent after its `command_id`, in the order of INTENT_COLUMNS. */
export const INTENT_FACT_COLUMNS = INTENT_COLUMN_NAMES.filter(
  (c) => c !== 'command_id' && !MUTABLE.has(c),
);
