// Dead letters: intents the bot gave up on. Retry sends one through the bot again; drop deletes
// it from the journal after a confirmation.
import { get, segment, send } from './api.js';
import { h, show } from './dom.js';
import { commandLabel, errorText } from './format.js';
import type { Permissions, Screen } from './screen.js';
import type { DeadLetterView } from './types.js';
import { act, button, confirmDialog, empty, problem, table, timeEl } from './ui.js';

const LIMIT = 500;

export function deadLettersScreen(permissions: Permissions): Screen & { changed(): void } {
  const root = h('section', { class: 'screen', 'data-testid': 'dead-letters' });
  let list: DeadLetterView[] | undefined;
  let error: unknown;

  const refresh = async (): Promise<void> => {
    try {
      list = (
        await get<{ deadLetters: DeadLetterView[] }>(`/dead-letters?limit=${LIMIT}&order=newest`)
      ).deadLetters;
      error = undefined;
    } catch (err) {
      error = err;
    }
    render();
  };

  const actions = (d: DeadLetterView): HTMLElement | null => {
    if (permissions.readOnly) return null;
    const path = `/dead-letters/${segment(d.commandId)}`;
    const retry = button(
      'Retry',
      () =>
        void act(retry, () => send('POST', `${path}/retry`), 'Sent back to the bot').then(refresh),
      'primary',
      'retry',
    );
    const drop = button(
      'Drop',
      () =>
        void (async () => {
          const sure = await confirmDialog(
            'Drop this dead letter?',
            [
              h(
                'p',
                null,
                'The intent is deleted from the journal and will not be submitted. This cannot be undone.',
              ),
              h('p', { class: 'mono' }, d.commandId),
            ],
            'Drop it',
          );
          if (sure && (await act(drop, () => send('DELETE', path), 'Dead letter dropped')))
            await refresh();
        })(),
      'danger',
      'drop',
    );
    return h('div', { class: 'actions' }, retry, drop);
  };

  const render = (): void => {
    if (root.hidden) return;
    if (list === undefined) {
      show(
        root,
        error === undefined
          ? empty('Loading the dead letters…')
          : problem(error, 'The dead letters'),
      );
      return;
    }
    show(
      root,
      h(
        'div',
        { class: 'screen-head' },
        h('h2', null, 'Dead letters'),
        h('span', { class: 'hint' }, `${list.length}${list.length === LIMIT ? '+' : ''}`),
      ),
      error === undefined ? null : problem(error, 'Refreshing the dead letters'),
      list.length === 0
        ? empty(
            'No dead letters.',
            'An intent lands here when the bot gave up on it: the ledger kept refusing it or it ran out of attempts.',
          )
        : table(
            [
              'Dead-lettered',
              'Rule',
              'Command id',
              'Attempts',
              'Error',
              ...(permissions.readOnly ? [] : ['']),
            ],
            list.map((d) =>
              h(
                'tr',
                { 'data-testid': 'dead-letter-row' },
                h('td', null, timeEl(d.deadLetteredAt)),
                h('td', { class: 'nowrap' }, d.ruleId),
                h(
                  'td',
                  null,
                  h(
                    'a',
                    { href: `#intents/${segment(d.commandId)}`, title: d.commandId, class: 'mono' },
                    commandLabel(d.commandId, d.ruleId),
                  ),
                ),
                h('td', { class: 'num' }, String(d.attempts)),
                h('td', { class: 'error-text' }, h('span', { class: 'clip' }, errorText(d.error))),
                permissions.readOnly ? null : h('td', null, actions(d)),
              ),
            ),
            'dead-letters-table',
          ),
    );
  };

  return {
    id: 'dead-letters',
    title: 'Dead letters',
    root,
    show() {
      render();
      void refresh();
    },
    changed() {
      if (!root.hidden) void refresh();
    },
  };
}
