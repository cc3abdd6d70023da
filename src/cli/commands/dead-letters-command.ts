import { DEFAULTS } from '../../core/defaults.js';
import { systemClock } from '../../core/clock.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { deadLetterView, type DeadLetterView } from '../../runtime/intent-view.js';
import {
  decodeSubmissionPayload,
  SubmissionPayloadError,
} from '../../runtime/submission-payload.js';
import type { JournalQueries } from '../../store/journal-queries.js';
import { storeQueries } from '../../store/store-queries.js';
import type { Store } from '../../store/store.js';
import { configOption } from '../cli-options.js';
import { defineCommand } from '../define-command.js';
import type { CliIo } from '../cli-io.js';
import { openConfigQueries } from '../compose/open-config-queries.js';
import { openConfigStoreForWriting } from '../compose/open-store-for-writing.js';
import {
  expectStatus,
  forwardedTo,
  isNotFound,
  OpsApiError,
  opsClientFor,
  type OpsClient,
} from '../ops-client.js';
import { readConfigFor } from '../compose/read-config.js';
import { UsageError } from '../usage-error.js';
import { formatDeadLetter, formatDeadLetterTable } from '../present/dead-letter-text.js';
import { formatForwarded } from '../present/forwarded-text.js';

/** Where the dead letters are worked on: the running bot, or its store. */
type Target = {
  readonly where: string;
  list(limit: number, ruleId: string | undefined): Promise<DeadLetterView[]>;
  show(commandId: string): Promise<DeadLetterView | undefined>;
  /**
   * False when there is no such dead letter; on a fleet member that does not run its rule, the
   * owner it was forwarded to.
   */
  retry(commandId: string): Promise<boolean | Forwarded>;
  drop(commandId: string): Promise<boolean | Forwarded>;
  close(): Promise<void> | void;
};

type Forwarded = { readonly owner: string | null };

const ACTIONS = ['list', 'show', 'retry', 'drop'] as const;
type Action = (typeof ACTIONS)[number];

export const deadLettersCommand = defineCommand({
  name: 'dead-letters',
  summary: 'list, show, retry (same commandId) or drop dead letters, via the bot or its store',
  usage: `dead-letters list|show ID|retry ID|drop ID --config FILE`,
  description: `Works on the dead letters of a bot: intents it gave up on (retries exhausted, deadline passed,
or a final rejection it could not act on). Through the running bot's ops API (the config's
http section) when it answers; otherwise directly on the state store in state.dir: list and
show read it (also while a bot without http runs), retry and drop need the bot to be stopped
(a running bot is the one writer of its store; with http it does them itself).

  list       the dead letters, oldest first
  show ID    one dead letter: its error, the commands, the triggering event
  retry ID   back into the pipeline under the SAME commandId (the ledger deduplicates, so it
             lands at most once): at once by the running bot, or at the next start
  drop ID    delete it for good`,
  options: {
    ...configOption(),
    limit: {
      type: 'string',
      default: String(DEFAULTS.deadLetterListLimit),
      value: 'N',
      help: `list at most N (default ${DEFAULTS.deadLetterListLimit})`,
    },
    rule: { type: 'string', value: 'ID', help: "list only this rule's" },
    json: { type: 'boolean', default: false, help: 'print JSON' },
  },
  positionals: true,
  footer: `Exit status: 0 done, 1 when it cannot be done (no such dead letter, a running bot without
http holds the store, bot not answering), 2 for usage and config errors.`,
  run: async ({ values, positionals }, io) => {
    const [action, id, ...extra] = positionals;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(
        `dead-letters needs one of ${ACTIONS.join(', ')}${action === undefined ? '' : `, not "${action}"`}`,
      );
    }
    if (action !== 'list' && id === undefined) {
      throw new UsageError(`dead-letters ${action} needs the commandId of the dead letter`);
    }
    if (extra.length > 0 || (action === 'list' && id !== undefined)) {
      throw new UsageError(`unexpected argument "${action === 'list' ? id : extra[0]}"`);
    }
    const limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new UsageError(`--limit must be an integer from 1 to 1000, not "${values.limit}"`);
    }
    const config = await readConfigFor(['http', 'state'], values.config);
    const target = await openTarget(config, action as Action);
    try {
      return await perform(
        target,
        action as Action,
        id ?? '',
        { limit, rule: values.rule },
        values.json === true,
        io,
        values.config,
      );
    } finally {
      await target.close();
    }
  },
});

async function perform(
  target: Target,
  action: Action,
  id: string,
  filter: { limit: number; rule: string | undefined },
  json: boolean,
  io: CliIo,
  configArg: string,
): Promise<number> {
  const missing = (): number => {
    io.err(
      `ledgerbot: there is no dead letter ${id} (${target.where}); \`ledgerbot dead-letters list\` shows them\n`,
    );
    return 1;
  };
  switch (action) {
    case 'list': {
      const list = await target.list(filter.limit, filter.rule);
      if (json) {
        io.out(`${JSON.stringify(list, null, 2)}\n`);
        return 0;
      }
      io.out(`${list.length} dead letter(s) (${target.where})\n`);
      if (list.length > 0) io.out(formatDeadLetterTable(list));
      return 0;
    }
    case 'show': {
      const d = await target.show(id);
      if (d === undefined) return missing();
      io.out(
        json ? `${JSON.stringify(d, null, 2)}\n` : formatDeadLetter(d, target.where, configArg),
      );
      return 0;
    }
    case 'retry':
    case 'drop': {
      const done = await (action === 'retry' ? target.retry(id) : target.drop(id));
      if (done === false) return missing();
      if (done !== true) {
        io.out(formatForwarded(`the ${action} of ${id} was`, done.owner, target.where));
      } else if (action === 'drop') {
        io.out(`dropped ${id} for good (${target.where})\n`);
      } else {
        io.out(
          target.where.startsWith('store')
            ? `requeued ${id} in the store: the bot resubmits it under the same commandId when it starts\n`
            : `requeued ${id}: the running bot resubmits it under the same commandId now\n`,
        );
      }
      return 0;
    }
  }
}

/** The running bot when its ops API answers; the store when nothing listens there. */
async function openTarget(config: BotConfig, action: Action): Promise<Target> {
  const client = opsClientFor(config);
  if (client !== undefined) {
    try {
      // A cheap probe: which one to use is decided before anything is changed.
      const probe = await client.request('GET', '/dead-letters?limit=1');
      expectStatus(probe, 200, 'GET', '/dead-letters');
      return apiTarget(client);
    } catch (err) {
      if (!(err instanceof OpsApiError) || err.failure !== 'unreachable') throw err;
    }
  }
  return await storeTarget(config, action, client !== undefined);
}

function apiTarget(client: OpsClient): Target {
  const path = (id: string): string => `/dead-letters/${encodeURIComponent(id)}`;
  const call = async (method: string, p: string, ok: number): Promise<unknown> => {
    const r = await client.request(method, p);
    return isNotFound(r) ? undefined : expectStatus(r, ok, method, p);
  };
  /** A write: false for no such dead letter, or the owner a fleet member forwarded it to. */
  const write = async (method: string, p: string, ok: number): Promise<boolean | Forwarded> => {
    const r = await client.request(method, p);
    if (isNotFound(r)) return false;
    const forwarded = forwardedTo(r);
    if (forwarded !== undefined) return forwarded;
    expectStatus(r, ok, method, p);
    return true;
  };
  return {
    where: `via the running bot at ${client.baseUrl}`,
    list: async (limit, ruleId) => {
      const q = `?limit=${limit}${ruleId === undefined ? '' : `&ruleId=${encodeURIComponent(ruleId)}`}`;
      const body = (await call('GET', `/dead-letters${q}`, 200)) as
        { deadLetters?: DeadLetterView[] } | undefined;
      return body?.deadLetters ?? [];
    },
    show: async (id) => {
      const body = (await call('GET', path(id), 200)) as
        { deadLetter?: DeadLetterView } | undefined;
      return body?.deadLetter;
    },
    retry: (id) => write('POST', `${path(id)}/retry`, 202),
    drop: (id) => write('DELETE', path(id), 200),
    close: () => undefined,
  };
}

async function storeTarget(
  config: BotConfig,
  action: Action,
  httpConfigured: boolean,
): Promise<Target> {
  let queries: JournalQueries;
  let where: string;
  let store: Store | undefined;
  let close: () => Promise<void>;
  if (action === 'list' || action === 'show') {
    // Read-only: it sees the store's last commit, also while a running bot writes it.
    const read = (await openConfigQueries(config, { mustExist: true }))!;
    ({ queries, where } = read);
    close = () => read.close();
  } else {
    // A write takes the single-writer lock: refused while a bot holds it (see the helper).
    const writable = await openConfigStoreForWriting(config, `dead-letters ${action}`, {
      httpTried: httpConfigured,
      mustExist: true,
    });
    store = writable.store;
    queries = storeQueries(writable.store);
    where = writable.where;
    close = () => writable.close();
  }
  const writer = (): Store => {
    if (store === undefined) throw new Error('unreachable: a read-only target was asked to write');
    return store;
  };
  return {
    where,
    list: async (limit, ruleId) =>
      (await queries.listDeadLetters({ limit, ...(ruleId === undefined ? {} : { ruleId }) })).map(
        (d) => deadLetterView(d),
      ),
    show: async (id) => {
      const d = await queries.getDeadLetter(id);
      return d === undefined ? undefined : deadLetterView(d, true);
    },
    retry: async (id) => {
      const d = await queries.getDeadLetter(id);
      if (d === undefined) return false;
      // A fresh deadline from the intent's own retry policy: the old one has passed.
      const payload = decodeSubmissionPayload(d.intent.payload);
      // An unusable payload: the bot dead-letters it again on start, with the reason.
      const deadlineMs =
        payload instanceof SubmissionPayloadError
          ? config.submission.retry.deadlineMs
          : payload.retry.deadlineMs;
      writer().requeueDeadLetter(id, { deadline: systemClock.now() + deadlineMs });
      await writer().sync();
      return true;
    },
    drop: async (id) => {
      const dropped = writer().purgeDeadLetter(id);
      await writer().sync();
      return dropped;
    },
    close,
  };
}
