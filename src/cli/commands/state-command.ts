import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../core/clock.js';
import { DEFAULTS } from '../../core/defaults.js';
import {
  JOURNAL_LINE_LIMITS,
  JournalFormatError,
  journalLines,
} from '../../store/journal-lines.js';
import { parseJournalLines } from '../../store/read-journal-lines.js';
import type { JournalContents } from '../../store/journal-transfer.js';
import type { PostgresConfig } from '../../runtime/config/bot-config.js';
import { maskPgUrl } from '../../store/pg/mask-pg-url.js';
import { openPgQueries } from '../../store/pg/open-pg-queries.js';
import { openPgStore } from '../../store/pg/open-pg-store.js';
import { openSqliteStore, SQLITE_STORE_FILE } from '../../store/open-sqlite-store.js';
import { StoreError } from '../../store/store-error.js';
import { storeQueries } from '../../store/store-queries.js';
import { INTENT_STATES } from '../../store/store.js';
import type { CliIo } from '../cli-io.js';
import { defineCommand } from '../define-command.js';
import { readConfig } from '../compose/read-config.js';
import { UsageError } from '../usage-error.js';

const ACTIONS = ['export', 'import'] as const;

/** Lines are written in chunks of about this many characters. */
const CHUNK = 1 << 20;

export const stateCommand = defineCommand({
  name: 'state',
  summary: 'export the journal to a JSON Lines file, or import one into an empty state directory',
  usage: 'state export|import [--config FILE | --state-dir DIR] [--out FILE|-] [--in FILE]',
  description: `Backs up or moves a bot's journal (intents with their attempts, payloads, events and dead
letters, the schedule slot records, the checkpoint) as a store-neutral, versioned JSON Lines
file (docs/operations.md, "Back up and move the journal").

  export     writes the journal of the state directory to --out (standard output by
             default); safe while the bot runs: it opens the store read-only and reads one
             consistent snapshot
  import     reads --in and writes it into the state directory, which must hold no journal
             (a fresh directory); checked line by line first, then written in one transaction,
             so a bad file writes nothing. The bot must not be running there

With state.postgres in the config, both work on its PostgreSQL schema instead of state.dir
(import: into an empty schema, under its writer lock).`,
  options: {
    config: {
      type: 'string',
      value: 'FILE',
      help: `the bot config, for its state.dir or state.postgres (default ./${DEFAULTS.cli.configFile})`,
    },
    'state-dir': { type: 'string', value: 'DIR', help: 'the state directory, instead of a config' },
    out: { type: 'string', value: 'FILE', help: 'export: the file to write, or - (the default)' },
    in: { type: 'string', value: 'FILE', help: 'import: the export to read' },
  },
  positionals: true,
  footer: `Exit status: 0 done, 1 when the store cannot be opened (no state store to export, a running bot
holds the one to import into), 2 for usage errors, a file that is not a whole export of this
format and version (the message names the file and line), and an import into a state
directory that already holds a journal.`,
  run: async ({ values, positionals }, io) => {
    const [action, ...extra] = positionals;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(
        `state needs export or import${action === undefined ? '' : `, not "${action}"`}`,
      );
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (values.config !== undefined && values['state-dir'] !== undefined) {
      throw new UsageError('state takes --config or --state-dir, not both');
    }
    if (action === 'export' && values.in !== undefined) {
      throw new UsageError('--in is for state import; state export writes to --out');
    }
    if (action === 'import' && values.out !== undefined) {
      throw new UsageError('--out is for state export; state import reads --in');
    }
    if (action === 'import' && values.in === undefined) {
      throw new UsageError('state import needs --in FILE, an export of `ledgerbot state export`');
    }
    let journal: JournalSide;
    const dir = values['state-dir'];
    if (dir === undefined) {
      const config = await readConfig(values.config ?? DEFAULTS.cli.configFile);
      // With state.postgres, state.dir holds only caches: the journal is in the schema.
      const pg = config.state.postgres;
      journal = pg === undefined ? sqliteSide(config.state.dir) : pgSide(pg);
    } else {
      journal = sqliteSide(dir);
    }
    try {
      return action === 'export'
        ? await exportState(journal, values.out ?? '-', io)
        : await importState(journal, values.in!, io);
    } catch (err) {
      if (
        err instanceof JournalFormatError ||
        (err instanceof StoreError && err.code === 'STORE_NOT_EMPTY')
      ) {
        io.err(`ledgerbot: ${err.message} [${err.code}]\n`);
        return 2;
      }
      throw err;
    }
  },
});

/** Where the journal is read from or written to: a SQLite state directory, or a schema. */
type JournalSide = {
  /** For messages: the directory, or the database with its password masked. */
  readonly where: string;
  read(): Promise<JournalContents>;
  write(journal: JournalContents): Promise<void>;
};

function sqliteSide(dir: string): JournalSide {
  return {
    where: dir,
    read: async () => {
      if (!existsSync(join(dir, SQLITE_STORE_FILE))) {
        throw new StoreError('STORE_OPEN_FAILED', `there is no state store in ${dir} to export`);
      }
      // Read-only, like the other reading commands: a running bot goes on writing meanwhile.
      const store = openSqliteStore({ dir, readonly: true });
      try {
        return await store.exportJournal();
      } finally {
        store.close();
      }
    },
    write: async (journal) => {
      if (existsSync(join(dir, SQLITE_STORE_FILE))) await assertEmpty(dir);
      const store = openSqliteStore({ dir, exclusive: true });
      try {
        await store.importJournal(journal);
      } finally {
        store.close();
      }
    },
  };
}

/**
 * The journal in PostgreSQL: read in one snapshot without a lock (beside a running bot), written
 * under the schema's writer lock into an empty schema (STORE_NOT_EMPTY otherwise).
 */
function pgSide(pg: PostgresConfig): JournalSide {
  const where = `${maskPgUrl(pg.url)} (schema ${pg.schema})`;
  return {
    where,
    read: async () => {
      const read = await openPgQueries({ url: pg.url, schema: pg.schema });
      if (read === undefined) {
        throw new StoreError('STORE_OPEN_FAILED', `there is no journal at ${where} to export`);
      }
      try {
        return await read.exportJournal();
      } finally {
        await read.close();
      }
    },
    write: async (journal) => {
      const store = await openPgStore({ url: pg.url, schema: pg.schema, exclusive: true });
      try {
        await store.importJournal(journal);
      } finally {
        await store.closeAsync();
      }
    },
  };
}

async function exportState(side: JournalSide, out: string, io: CliIo): Promise<number> {
  const journal = await side.read();
  const lines = journalLines(journal, systemClock.now());
  const summary = `${journal.intents.length} intent(s) and ${journal.slots.length} slot record(s) from ${side.where}`;
  if (out === '-') {
    // All made before the first is written: an intent that cannot be exported stops it with
    // nothing on stdout, not a cut journal.
    for (const chunk of [...chunks(lines)]) io.out(chunk);
    io.err(`exported ${summary}\n`);
    return 0;
  }
  // Written beside the target and renamed: a failed export leaves no partial file behind. Only
  // the owner reads it: it holds the business of the bot's parties.
  const temp = `${out}.${process.pid}.tmp`;
  try {
    const fd = openSync(temp, 'wx', 0o600);
    try {
      for (const chunk of chunks(lines)) writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, out);
  } catch (err) {
    rmSync(temp, { force: true });
    if (err instanceof JournalFormatError) throw err;
    throw new UsageError(`cannot write ${out}: ${(err as Error).message}`, { cause: err });
  }
  io.out(`exported ${summary} to ${out}\n`);
  return 0;
}

async function importState(side: JournalSide, file: string, io: CliIo): Promise<number> {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (size > JOURNAL_LINE_LIMITS.maxFileBytes) {
    throw new JournalFormatError(
      'JOURNAL_BAD_FORMAT',
      `${file}: the file has ${size} bytes, more than ${JOURNAL_LINE_LIMITS.maxFileBytes}`,
    );
  }
  // Every line is checked before the store is opened: a bad file writes nothing.
  const journal = parseJournalLines(readFileSync(file), file);
  await side.write(journal);
  io.out(
    `imported ${journal.intents.length} intent(s) and ${journal.slots.length} slot record(s) into ${side.where} (checkpoint ${journal.checkpoint ?? 'none'})\n`,
  );
  return 0;
}

/** Refuses a store that holds a journal without opening it for writing (which may migrate it). */
async function assertEmpty(dir: string): Promise<void> {
  const store = openSqliteStore({ dir, readonly: true });
  try {
    const queries = storeQueries(store);
    const counts = await queries.countByState();
    const intents = INTENT_STATES.reduce((n, s) => n + counts[s], 0);
    const slots = (await queries.listSlotRecords()).length;
    if (intents > 0 || slots > 0 || store.checkpoint() !== undefined) {
      throw new StoreError(
        'STORE_NOT_EMPTY',
        `the state directory ${dir} already holds a journal (${intents} intent(s)): import only into a fresh state directory`,
      );
    }
  } finally {
    store.close();
  }
}

function* chunks(lines: Iterable<string>): Generator<string> {
  let chunk = '';
  for (const line of lines) {
    chunk += line;
    if (chunk.length >= CHUNK) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
