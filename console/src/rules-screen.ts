// Rules: what each rule reacts to, whether it is running, how it has done; pause and resume.
import { segment, send } from './api.js';
import { h, show } from './dom.js';
import { baseName, count, shortTemplate } from './format.js';
import type { Permissions, Screen } from './screen.js';
import type { RuleRow } from './types.js';
import { act, badge, button, empty, problem, table, timeEl } from './ui.js';

export type RulesSource = {
  /** The rows as last fetched (or pushed), with the rule set's revision. */
  readonly rows: () => readonly RuleRow[] | undefined;
  readonly revision: () => number | null;
  readonly error: () => unknown;
  /** Fetch the rows again (after an action). */
  readonly refresh: () => Promise<void>;
};

const STATE_HINT: Readonly<Record<string, string>> = {
  active: 'reacting to the ledger',
  paused: 'ignores new events until resumed; resuming catches up on what it missed',
  resuming: 'catching up on the events it missed while paused',
  disabled: 'switched off in its rule file',
};

function trigger(r: RuleRow): HTMLElement {
  if (r.trigger === 'schedule') {
    return h(
      'div',
      { class: 'trigger' },
      h('span', { class: 'kind' }, 'schedule'),
      ' ',
      h('code', null, r.cron ?? '?'),
      r.timezone ? h('span', { class: 'hint' }, ` (${r.timezone})`) : null,
      r.nextSlot ? h('div', { class: 'hint' }, 'next ', timeEl(r.nextSlot)) : null,
    );
  }
  return h(
    'div',
    { class: 'trigger' },
    h('span', { class: 'kind' }, r.trigger),
    ' ',
    r.template ? h('code', { title: r.template }, shortTemplate(r.template)) : null,
    r.choice ? [' · ', h('code', null, r.choice)] : null,
  );
}

export function rulesScreen(
  permissions: Permissions,
  source: RulesSource,
): Screen & {
  render(): void;
} {
  const root = h('section', { class: 'screen', 'data-testid': 'rules' });

  const actions = (r: RuleRow): HTMLElement | null => {
    if (permissions.readOnly) return null;
    const path = `/rules/${segment(r.id)}`;
    if (r.state === 'active') {
      const b = button(
        'Pause',
        () =>
          void act(b, () => send('POST', `${path}/pause`), `Rule ${r.id} paused`).then(
            source.refresh,
          ),
        'secondary',
        `pause-${r.id}`,
      );
      return b;
    }
    if (r.state === 'paused') {
      const b = button(
        'Resume',
        () =>
          void act(b, () => send('POST', `${path}/resume`), `Rule ${r.id} resumed`).then(
            source.refresh,
          ),
        'primary',
        `resume-${r.id}`,
      );
      return b;
    }
    return null;
  };

  const row = (r: RuleRow): HTMLTableRowElement =>
    h(
      'tr',
      { 'data-testid': `rule-${r.id}` },
      h(
        'td',
        null,
        h('div', { class: 'rule-id' }, r.id),
        r.description ? h('div', { class: 'hint' }, r.description) : null,
        r.file === undefined
          ? null
          : h(
              'div',
              { class: 'source', title: `${r.file}:${r.line ?? '?'}`, 'data-testid': 'source' },
              `${baseName(r.file)}:${r.line ?? '?'}`,
            ),
      ),
      h('td', null, trigger(r)),
      h(
        'td',
        { title: STATE_HINT[r.state] ?? '' },
        badge(r.state),
        r.state === 'paused' && r.pausedAt
          ? h('div', { class: 'hint' }, 'since ', timeEl(r.pausedAt))
          : null,
      ),
      h(
        'td',
        { class: 'num', 'data-testid': 'fired' },
        h(
          'a',
          { href: `#intents?ruleId=${encodeURIComponent(r.id)}`, title: 'this rule’s intents' },
          count(r.counts?.fired),
        ),
      ),
      h(
        'td',
        { class: `num${(r.counts?.succeeded ?? 0) > 0 ? ' good-text' : ''}` },
        count(r.counts?.succeeded),
      ),
      h(
        'td',
        { class: `num${(r.counts?.failed ?? 0) > 0 ? ' bad-text' : ''}` },
        count(r.counts?.failed),
      ),
      h(
        'td',
        { class: `num${(r.counts?.deadLettered ?? 0) > 0 ? ' bad-text' : ''}` },
        count(r.counts?.deadLettered),
      ),
      h('td', null, timeEl(r.lastFiredAt, 'never')),
      permissions.readOnly ? null : h('td', {}, h('div', { class: 'actions' }, actions(r))),
    );

  const render = (): void => {
    const rows = source.rows();
    const err = source.error();
    if (rows === undefined) {
      show(root, err === undefined ? empty('Loading the rules…') : problem(err, 'The rules'));
      return;
    }
    const revision = source.revision();
    show(
      root,
      h(
        'div',
        { class: 'screen-head' },
        h('h2', null, 'Rules'),
        h('span', { class: 'hint' }, revision === null ? '' : `rule set revision ${revision}`),
      ),
      err === undefined ? null : problem(err, 'Refreshing the rules'),
      rows.length === 0
        ? empty('No rules are loaded.', 'Add rule files to the folder the config names and reload.')
        : table(
            [
              'Rule',
              'Trigger',
              'State',
              'Fired',
              'Succeeded',
              'Failed',
              'Dead letters',
              'Last fired',
              ...(permissions.readOnly ? [] : ['']),
            ],
            rows.map(row),
            'rules-table',
          ),
      h(
        'p',
        { class: 'hint' },
        'Counts are since the bot started. Pausing a rule makes it skip new events; resuming catches up on the events it skipped.',
      ),
    );
  };

  return { id: 'rules', title: 'Rules', root, show: render, render };
}
