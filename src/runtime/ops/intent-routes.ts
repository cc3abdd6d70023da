import type { JournalQueries } from '../../store/journal-queries.js';
import { INTENT_STATES, type IntentState } from '../../store/store.js';
import { intentDetailView, intentView } from '../intent-view.js';
import { badRequest, notFound, type Route } from './ops-http.js';

/** `GET /intents`: at most this many per page, and this many when `limit` is not given. */
export const MAX_INTENT_PAGE = 1000;
export const DEFAULT_INTENT_PAGE = 100;

/**
 * The journal's intents: a page of them, newest change first (`GET /intents`), and one with
 * its trigger, command and attempts (`GET /intents/{commandId}`). Pages are read by the store's
 * query (an index), so a journal of any size answers as fast.
 */
export function intentRoutes(queries: JournalQueries): Route[] {
  return [
    {
      method: 'GET',
      pattern: /^\/intents$/,
      auth: true,
      handle: async (_params, url) => {
        const q = url.searchParams;
        const state = q.get('state');
        if (state !== null && !INTENT_STATES.includes(state as IntentState)) {
          throw badRequest(`state must be one of ${INTENT_STATES.join(', ')}, not "${state}"`);
        }
        const limitText = q.get('limit');
        const limit = limitText === null ? DEFAULT_INTENT_PAGE : Number(limitText);
        if (
          limitText?.trim() === '' ||
          !Number.isInteger(limit) ||
          limit < 1 ||
          limit > MAX_INTENT_PAGE
        ) {
          throw badRequest(`limit must be a whole number 1..${MAX_INTENT_PAGE}`);
        }
        const beforeText = q.get('before');
        const before = beforeText === null ? undefined : decodeCursor(beforeText);
        const ruleId = q.get('ruleId');
        // One more than asked: whether there is a next page.
        const found = await queries.listIntents({
          order: 'recent',
          limit: limit + 1,
          ...(state === null ? {} : { states: [state as IntentState] }),
          ...(ruleId === null || ruleId === '' ? {} : { ruleId }),
          ...(before === undefined ? {} : { before }),
        });
        const page = found.slice(0, limit);
        const last = page[page.length - 1];
        return {
          status: 200,
          body: {
            intents: page.map(intentView),
            next:
              found.length > limit && last !== undefined
                ? encodeCursor(last.updatedAt, last.commandId)
                : null,
          },
        };
      },
    },
    {
      method: 'GET',
      pattern: /^\/intents\/([^/]+)$/,
      auth: true,
      handle: async ([id]) => {
        // Asked together: a store that answers at once reads all three in one turn, so the
        // attempts and the event are of the intent as read, not of a later change.
        const [i, attempts, event] = await Promise.all([
          queries.getIntent(id!),
          queries.getAttempts(id!),
          queries.getRecordedEvent(id!),
        ]);
        if (i === undefined) throw notFound(`no intent with commandId "${id}"`);
        return { status: 200, body: { intent: intentDetailView(i, attempts, event) } };
      },
    },
  ];
}

/** The `next` of a page: where the following page starts, opaque to the caller. */
export function encodeCursor(updatedAt: number, commandId: string): string {
  return Buffer.from(JSON.stringify([updatedAt, commandId])).toString('base64url');
}

function decodeCursor(text: string): { updatedAt: number; commandId: string } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    typeof value[1] !== 'string'
  ) {
    throw badRequest('before must be the `next` of a previous page of GET /intents');
  }
  return { updatedAt: value[0] as number, commandId: value[1] };
}
