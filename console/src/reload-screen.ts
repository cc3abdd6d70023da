// Reload: the rule set in effect (each rule's revision and content hash) and what the last reload
// changed, or why it was refused; a button reloads the rule files now.
import { get, send } from './api.js';
import { h, show } from './dom.js';
import type { Permissions, Screen } from './screen.js';
import type { LastReload, ReloadInfo, RuleVersion } from './types.js';
import { act, button, empty, problem, table, timeEl } from './ui.js';

export function reloadScreen(
  permissions: Permissions,
): Screen & { changed(last: LastReload): void } {
  const root = h('section', { class: 'screen', 'data-testid': 'reload' });
  let info: ReloadInfo | undefined;
  let error: unknown;

  const refresh = async (): Promise<void> => {
    try {
      info = await get<ReloadInfo>('/reload');
      error = undefined;
    } catch (err) {
      error = err;
    }
    render();
  };

  const versions = (
    title: string,
    list: readonly RuleVersion[],
    tone: string,
  ): HTMLElement | null =>
    list.length === 0
      ? null
      : h(
          'div',
          { class: `diff ${tone}` },
          h('h4', null, `${title} (${list.length})`),
          h(
            'ul',
            null,
            list.map((v) =>
              h('li', null, h('strong', null, v.id), ` revision ${v.revision} · ${v.hash}`),
            ),
          ),
        );

  const lastReload = (last: LastReload | null): HTMLElement => {
    if (last === null)
      return empty(
        'No reload since the bot started.',
        'Reload after editing the rule files: here, with SIGHUP, or POST /rules/reload.',
      );
    if (!last.applied) {
      return h(
        'div',
        { class: 'banner bad', 'data-testid': 'reload-errors' },
        h(
          'p',
          null,
          h('strong', null, 'Refused'),
          ' (',
          timeEl(last.at),
          '); the rules before it stay in effect:',
        ),
        h(
          'ul',
          null,
          last.errors.map((e) => h('li', { class: 'mono' }, e)),
        ),
      );
    }
    const d = last.diff;
    const nothing = d.added.length + d.changed.length + d.removed.length === 0;
    return h(
      'div',
      { 'data-testid': 'reload-diff' },
      h(
        'p',
        null,
        h('strong', null, 'Applied'),
        ' ',
        timeEl(last.at),
        nothing ? ': nothing changed.' : ':',
      ),
      versions('Added', d.added, 'good'),
      versions('Changed', d.changed, 'busy'),
      versions('Removed', d.removed, 'bad'),
      h('p', { class: 'hint' }, `${d.unchanged} rule(s) unchanged.`),
    );
  };

  const render = (): void => {
    if (root.hidden) return;
    const reloadButton = permissions.readOnly
      ? null
      : button(
          'Reload rules now',
          () =>
            void act(reloadButton!, () => send('POST', '/rules/reload'), 'Rules reloaded').then(
              refresh,
            ),
          'primary',
          'reload-now',
        );
    if (info === undefined) {
      show(root, error === undefined ? empty('Loading…') : problem(error, 'The rule set'));
      return;
    }
    show(
      root,
      h(
        'div',
        { class: 'screen-head' },
        h('h2', null, 'Reload'),
        h(
          'span',
          { class: 'hint' },
          info.revision === null ? '' : `rule set revision ${info.revision}`,
        ),
        reloadButton,
      ),
      error === undefined ? null : problem(error, 'Refreshing'),
      h('h3', null, 'Last reload'),
      lastReload(info.last),
      h('h3', null, 'Rules in effect'),
      info.rules.length === 0
        ? empty('No rules are loaded.')
        : table(
            ['Rule', 'Revision', 'Content hash'],
            info.rules.map((r) =>
              h(
                'tr',
                null,
                h('td', null, r.id),
                h('td', { class: 'num' }, String(r.revision)),
                h('td', { class: 'mono' }, r.hash),
              ),
            ),
            'reload-rules',
          ),
    );
  };

  return {
    id: 'reload',
    title: 'Reload',
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
