import type { PgMigrationComponent } from './pg-migration.js';

/**
 * The journal's PostgreSQL schema (component `journal`). One row per intent in `lb_intents`,
 * upserted by command id at each commit that changed it (see PgStore for why no log), with its
 * dead letter in the same row; the columns are named as the SQLite store's, so both read rows
 * with the same code. Offsets and times are `bigint` (epoch ms), JSON is `text` (written and
 * read as the SQLite store does, never queried inside).
 */
export const JOURNAL_PG_MIGRATIONS: PgMigrationComponent = {
  name: 'journal',
  migrations: [
    {
      version: 1,
      sql: `
        -- One checkpoint per owner: 'default' for a single instance; a fleet keeps one per lease.
        CREATE TABLE lb_checkpoints (
          owner text PRIMARY KEY,
          resume_offset bigint,
          processed_offset bigint
        );
        CREATE TABLE lb_intents (
          command_id text COLLATE "C" PRIMARY KEY,
          user_id text NOT NULL,
          act_as text NOT NULL,
          rule_id text NOT NULL,
          revision integer NOT NULL,
          action_index integer NOT NULL,
          trigger_kind text NOT NULL CHECK (trigger_kind IN ('event', 'slot')),
          trigger_update_id text,
          trigger_node_id bigint,
          trigger_slot bigint,
          trigger_contract_id text,
          justifying_offset bigint NOT NULL,
          payload text NOT NULL,
          event text,
          state text NOT NULL CHECK (state IN
            ('pending', 'submitted', 'succeeded', 'duplicate', 'rejected', 'dead-lettered')),
          attempts integer NOT NULL,
          submission_id text,
          last_error text,
          next_attempt_at bigint,
          deadline bigint,
          created_at bigint NOT NULL,
          updated_at bigint NOT NULL,
          completion_offset bigint,
          completion_update_id text,
          in_doubt smallint NOT NULL,
          attempt_log text,
          -- the dead letter, while state = 'dead-lettered'
          dl_error text,
          dl_event text,
          dead_lettered_at bigint
        );
        -- The open intents are loaded at open, by justifying offset.
        CREATE INDEX lb_intents_open ON lb_intents (justifying_offset)
          WHERE state IN ('pending', 'submitted');
        -- The pruning recovery looks intents up by the ledger event that triggered them.
        CREATE INDEX lb_intents_event ON lb_intents (justifying_offset, trigger_node_id)
          WHERE trigger_kind = 'event';
        CREATE TABLE lb_schedule_slots (
          rule_id text PRIMARY KEY,
          last_completed_slot bigint,
          in_progress_slot bigint,
          in_progress_since bigint,
          snapshot_offset bigint
        );
      `,
    },
    {
      version: 2,
      sql: `
        -- The operator's reads: intents by their latest change, newest first, a page at a time;
        -- dead letters in the order they died; compaction's finished intents.
        CREATE INDEX lb_intents_recent ON lb_intents (updated_at, command_id);
        CREATE INDEX lb_intents_rule_recent ON lb_intents (rule_id, updated_at, command_id);
        CREATE INDEX lb_intents_dead ON lb_intents (dead_lettered_at, command_id)
          WHERE state = 'dead-lettered';
        CREATE INDEX lb_intents_finished ON lb_intents (updated_at)
          WHERE state IN ('succeeded', 'duplicate', 'rejected');
      `,
    },
  ],
};
