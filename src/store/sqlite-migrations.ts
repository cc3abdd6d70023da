/**
 * The SQLite schema, as an append-only list of migrations. Never edit a released migration: add
 * the next one. `schema_version` records which ones a file has had, each applied in its own
 * transaction together with its row, so a crash mid-migration leaves the previous version.
 */
export type SqliteMigration = { readonly version: number; readonly sql: string };

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE checkpoint (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        -- the resume offset (low-watermark); NULL until the first advance
        resume_offset INTEGER,
        -- the highest offset whose events have all been evaluated and their intents recorded
        processed_offset INTEGER
      );
      INSERT INTO checkpoint (id, resume_offset, processed_offset) VALUES (1, NULL, NULL);

      CREATE TABLE intents (
        command_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        act_as TEXT NOT NULL,
        rule_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        action_index INTEGER NOT NULL,
        trigger_kind TEXT NOT NULL CHECK (trigger_kind IN ('event', 'slot')),
        trigger_update_id TEXT,
        trigger_node_id INTEGER,
        trigger_slot INTEGER,
        trigger_contract_id TEXT,
        justifying_offset INTEGER NOT NULL,
        payload TEXT NOT NULL,
        event TEXT,
        state TEXT NOT NULL CHECK (state IN
          ('pending', 'submitted', 'succeeded', 'duplicate', 'rejected', 'dead-lettered')),
        attempts INTEGER NOT NULL DEFAULT 0,
        submission_id TEXT,
        last_error TEXT,
        next_attempt_at INTEGER,
        deadline INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        completion_offset INTEGER,
        completion_update_id TEXT
      );
      -- The low-watermark query and the restart scan read only open intents.
      CREATE INDEX intents_open ON intents (justifying_offset)
        WHERE state IN ('pending', 'submitted');
      CREATE INDEX intents_finished ON intents (updated_at)
        WHERE state IN ('succeeded', 'duplicate', 'rejected');

      CREATE TABLE dead_letters (
        command_id TEXT PRIMARY KEY REFERENCES intents (command_id) ON DELETE CASCADE,
        error TEXT NOT NULL,
        event TEXT,
        dead_lettered_at INTEGER NOT NULL
      );

      CREATE TABLE schedule_slots (
        rule_id TEXT PRIMARY KEY,
        last_completed_slot INTEGER,
        in_progress_slot INTEGER,
        in_progress_since INTEGER,
        snapshot_offset INTEGER
      );
    `,
  },
  {
    version: 2,
    sql: `
      -- 1 once an attempt of the intent ended without a definite answer (it may have committed).
      -- Rows from version 1 do not know: any with an attempt counts as in doubt.
      ALTER TABLE intents ADD COLUMN in_doubt INTEGER NOT NULL DEFAULT 0;
      UPDATE intents SET in_doubt = 1 WHERE attempts > 0;
      -- The pruning recovery looks up intents by the ledger event that triggered them.
      CREATE INDEX intents_event ON intents (justifying_offset, trigger_node_id)
        WHERE trigger_kind = 'event';
    `,
  },
  {
    version: 3,
    sql: `
      -- The journal's append-only log: one row per intent changed since the previous commit,
      -- with its state after the change. intents and dead_letters hold the folded form;
      -- the store replays the log over them at open, and folds the log into them (and empties
      -- it) when it grows past a bound, at compaction and at close. No secondary index: an
      -- append is one B-tree insert.
      CREATE TABLE intent_log (
        seq INTEGER PRIMARY KEY,
        command_id TEXT NOT NULL,
        -- an intent state, or 'purged' (a dead letter deleted for good)
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        submission_id TEXT,
        last_error TEXT,
        next_attempt_at INTEGER,
        deadline INTEGER,
        updated_at INTEGER NOT NULL,
        completion_offset INTEGER,
        completion_update_id TEXT,
        in_doubt INTEGER NOT NULL,
        -- the dead letter, when state = 'dead-lettered'
        dl_error TEXT,
        dl_event TEXT,
        dead_lettered_at INTEGER,
        -- the intent's facts, only in the row that records it (NULL in the later ones)
        user_id TEXT,
        act_as TEXT,
        rule_id TEXT,
        revision INTEGER,
        action_index INTEGER,
        trigger_kind TEXT,
        trigger_update_id TEXT,
        trigger_node_id INTEGER,
        trigger_slot INTEGER,
        trigger_contract_id TEXT,
        justifying_offset INTEGER,
        payload TEXT,
        event TEXT,
        created_at INTEGER
      );
    `,
  },
  {
    version: 4,
    sql: `
      -- The ops API lists intents by their latest change, newest first, a page at a time.
      CREATE INDEX intents_recent ON intents (updated_at, command_id);
      CREATE INDEX intents_rule_recent ON intents (rule_id, updated_at, command_id);
    `,
  },
  {
    version: 5,
    sql: `
      -- Every submission attempt of an intent (the last 50), as JSON: see attempt-log.ts.
      -- Rows from before have none (NULL): their attempts are counted, not listed.
      ALTER TABLE intents ADD COLUMN attempt_log TEXT;
      ALTER TABLE intent_log ADD COLUMN attempt_log TEXT;
    `,
  },
];
