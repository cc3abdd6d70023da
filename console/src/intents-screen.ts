// Intents: the latest commands the rules asked for, filtered by rule and state, newest first;
// `#intents/<commandId>` shows one intent with its trigger, its command and every attempt.
import { get, segment, withQuery } from './api.js';
import { h, show, type Child } from './dom.js';
import { commandLabel, errorText, fromHash, prettyJson, STATE_LABEL } from './format.js';
import type { Screen } from './screen.js';
import { INTENT_STATES, type Attempt, type IntentDetail, type IntentView } from './types.js';
import { badge, button, code, empty, facts, problem, table, timeEl } from './ui.js';

const PAGE = 100;
/** The most a page of GET /intents holds. */
const MAX_ROWS = 1000;

export function intentsScreen(ruleIds: () => readonly string[]): Screen & { changed(): void } {
  const root = h('section', { class: 'screen', 'data-testid': 'intents' });
  let filter = { ruleId: '', state: '' };
  let list: IntentView[] = [];
  let next: string | null = null;
  let error: unknown;
  let detailId: string | undefined;
  let loading = false;

  /** `rows`: how many of the newest to read (a live refresh keeps the older pages shown). */
  const fetchPage = async (before?: string, rows = PAGE): Promise<void> => {
    loading = true;
    try {
      const page = await get<{ intents: IntentView[]; next: string | null }>(
        withQuery('/intents', {
          ruleId: filter.ruleId,
          state: filter.state,
          limit: String(rows),
          before,
        }),
      );
      list = before === undefined ? page.intents : [...list, ...page.intents];
      next = page.next;
      error = undefined;
    } catch (err) {
      error = err;
    } finally {
      loading = false;
    }
  };

  const select = (
    label: string,
    value: string,
    options: readonly (readonly [string, string])[],
    onchange: (v: string) => void,
    testid: string,
  ): HTMLElement =>
    h(
      'label',
      { class: 'filter' },
      label,
      h(
        'select',
        {
          'data-testid': testid,
          onchange: (e) => onchange((e.target as HTMLSelectElement).value),
        },
        options.map(([v, text]) => {
          const o = h('option', { value: v }, text);
          o.selected = v === value;
          return o;
        }),
      ),
    );

  const setFilter = (change: Partial<typeof filter>): void => {
    filter = { ...filter, ...change };
    const query = withQuery('', filter);
    history.replaceState(null, '', `#intents${query}`);
    void fetchPage().then(renderList);
  };

  const renderList = (): void => {
    if (detailId !== undefined) return;
    const filters = h(
      'div',
      { class: 'filters' },
      select(
        'Rule',
        filter.ruleId,
        [['', 'all rules'], ...ruleIds().map((id) => [id, id] as const)],
        (ruleId) => setFilter({ ruleId }),
        'filter-rule',
      ),
      select(
        'State',
        filter.state,
        [['', 'all states'], ...INTENT_STATES.map((s) => [s, STATE_LABEL[s]] as const)],
        (state) => setFilter({ state }),
        'filter-state',
      ),
    );
    const rows = list.map((i) =>
      h(
        'tr',
        { 'data-testid': 'intent-row' },
        h('td', null, timeEl(i.updatedAt)),
        h('td', { class: 'nowrap' }, i.ruleId),
        h('td', null, badge(i.state, STATE_LABEL[i.state] ?? i.state)),
        h(
          'td',
          null,
          h(
            'a',
            { href: `#intents/${segment(i.commandId)}`, title: i.commandId, class: 'mono' },
            commandLabel(i.commandId, i.ruleId),
          ),
        ),
        h('td', { class: 'num' }, String(i.attempts)),
        h('td', { class: 'error-text' }, h('span', { class: 'clip' }, errorText(i.error))),
      ),
    );
    show(
      root,
      h('div', { class: 'screen-head' }, h('h2', null, 'Intents'), filters),
      error === undefined ? null : problem(error, 'The intents'),
      list.length === 0
        ? loading
          ? empty('Loading…')
          : empty(
              filter.ruleId === '' && filter.state === ''
                ? 'No intents yet.'
                : 'No intents match these filters.',
              'An intent is a command a rule asked for; it appears here as soon as a rule fires.',
            )
        : table(
            ['Updated', 'Rule', 'State', 'Command id', 'Attempts', 'Error'],
            rows,
            'intents-table',
          ),
      next === null
        ? null
        : button(
            'Show older',
            () => void fetchPage(next ?? undefined).then(renderList),
            'secondary',
            'more',
          ),
    );
  };

  const attemptRows = (attempts: readonly Attempt[]): HTMLTableRowElement[] =>
    attempts.map((a) =>
      h(
        'tr',
        null,
        h('td', { class: 'num' }, String(a.n)),
        h('td', null, timeEl(a.at)),
        h('td', { class: 'mono' }, a.submissionId),
        h('td', null, badge(outcomeTone(a.outcome), a.outcome)),
        h('td', { class: 'error-text' }, errorText(a.error)),
      ),
    );

  const renderDetail = async (id: string): Promise<void> => {
    show(root, empty('Loading the intent…'));
    let d: IntentDetail;
    try {
      d = (await get<{ intent: IntentDetail }>(`/intents/${segment(id)}`)).intent;
    } catch (err) {
      show(root, backLink(), problem(err, `Intent ${id}`));
      return;
    }
    if (detailId !== id) return; // the user went elsewhere meanwhile
    const attempts = d.attemptList ?? (Array.isArray(d.attempts) ? d.attempts : undefined);
    const attemptCount = typeof d.attempts === 'number' ? d.attempts : (attempts?.length ?? 0);
    const t = d.trigger;
    show(
      root,
      backLink(),
      h(
        'div',
        { class: 'screen-head' },
        h('h2', null, 'Intent'),
        badge(d.state, STATE_LABEL[d.state] ?? d.state),
      ),
      h(
        'div',
        { class: 'cards' },
        h(
          'div',
          { class: 'card wide' },
          h('h3', null, 'What and why'),
          facts([
            ['Command id', h('span', { class: 'mono', 'data-testid': 'command-id' }, d.commandId)],
            ['Rule', `${d.ruleId}${d.revision === undefined ? '' : ` (revision ${d.revision})`}`],
            ['Acts as', d.actAs === undefined ? '–' : d.actAs.join(', ')],
            ['Created', timeEl(d.createdAt)],
            ['Updated', timeEl(d.updatedAt)],
            ['Attempts', String(attemptCount)],
            [
              'Last error',
              d.error === undefined
                ? 'none'
                : h('span', { class: 'error-text' }, errorText(d.error)),
            ],
          ]),
        ),
        h(
          'div',
          { class: 'card wide' },
          h('h3', null, 'Trigger'),
          facts([
            ['Kind', t?.kind ?? '–'],
            [
              'Update id',
              updateLink(d.event?.updateId ?? (t?.kind === 'event' ? t.updateId : null)),
            ],
            ['Offset', String(d.event?.offset ?? d.offset)],
            [
              'Contract',
              h(
                'span',
                { class: 'mono', 'data-testid': 'trigger-contract' },
                d.event?.contractId ?? (t !== undefined && 'contractId' in t ? t.contractId : '–'),
              ),
            ],
            ...(t?.kind === 'slot' ? ([['Slot', timeEl(t.slot)]] as const) : []),
          ]),
        ),
      ),
      h('h3', null, 'Command'),
      d.command === undefined
        ? empty('This bot does not show the command.')
        : code(prettyJson(d.command)),
      h('h3', null, 'Attempts'),
      attempts === undefined
        ? empty('This bot does not keep the attempts.')
        : attempts.length === 0
          ? empty('Not submitted yet.')
          : table(
              ['#', 'At', 'Submission id', 'Outcome', 'Error'],
              attemptRows(attempts),
              'attempts-table',
            ),
    );
  };

  return {
    id: 'intents',
    title: 'Intents',
    root,
    show(arg) {
      if (arg !== undefined && !arg.startsWith('?')) {
        detailId = fromHash(arg);
        void renderDetail(detailId);
        return;
      }
      detailId = undefined;
      const query = new URLSearchParams(arg ?? '');
      filter = { ruleId: query.get('ruleId') ?? '', state: query.get('state') ?? '' };
      renderList();
      void fetchPage().then(renderList);
    },
    changed() {
      if (root.hidden || detailId !== undefined) return;
      // As many rows as are shown (the pages "Show older" added stay), up to the API's limit.
      void fetchPage(undefined, Math.min(MAX_ROWS, Math.max(PAGE, list.length))).then(renderList);
    },
  };
}

/** The update that triggered the intent, linked to its Why (not) explanation. */
function updateLink(updateId: string | null): Child {
  if (updateId === null) return '–';
  return h(
    'span',
    null,
    h('span', { class: 'mono' }, updateId),
    ' ',
    h('a', { href: `#why/${encodeURIComponent(updateId)}` }, 'why?'),
  );
}

function backLink(): HTMLElement {
  return h('p', null, h('a', { href: '#intents', class: 'back' }, '← all intents'));
}

function outcomeTone(outcome: string): string {
  switch (outcome) {
    case 'succeeded':
    case 'duplicate':
      return 'succeeded';
    case 'pending':
    case 'retry':
    case 'in-doubt':
      return 'pending';
    default:
      return 'rejected';
  }
}
