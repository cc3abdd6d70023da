// Why (not): for one ledger update, what each rule made of each event, condition by condition
// (the same evaluation as `ledgerbot explain`).
import { get, withQuery } from './api.js';
import { h, show } from './dom.js';
import { fromHash, prettyJson, shortId, shortTemplate } from './format.js';
import type { Screen } from './screen.js';
import type { Explanation } from './types.js';
import { badge, code, empty, problem, timeEl } from './ui.js';

export function whyScreen(): Screen {
  const root = h('section', { class: 'screen', 'data-testid': 'why' });
  const input = h('input', {
    type: 'text',
    name: 'update',
    placeholder: 'an update id, or an offset',
    autocomplete: 'off',
    'aria-label': 'update id or offset',
    'data-testid': 'why-input',
  });
  const result = h('div', { class: 'why-result' });

  const explain = async (): Promise<void> => {
    const text = input.value.trim();
    if (text === '') {
      show(
        result,
        empty('Paste the id of a ledger update (or its offset) to see what the rules made of it.'),
      );
      return;
    }
    history.replaceState(null, '', `#why/${encodeURIComponent(text)}`);
    show(result, empty('Evaluating…'));
    const query = /^\d+$/.test(text) ? { offset: text } : { updateId: text };
    try {
      render(await get<Explanation>(withQuery('/explain', query)));
    } catch (err) {
      show(result, problem(err, 'Explaining the update'));
    }
  };

  const render = (x: Explanation): void => {
    show(
      result,
      h(
        'p',
        { class: 'hint' },
        `Update ${x.updateId} at offset ${x.offset}`,
        x.recordTime ? [', recorded ', timeEl(x.recordTime)] : null,
      ),
      x.events.length === 0
        ? empty('No event of this update concerns any rule.')
        : x.events.map((ev) =>
            h(
              'div',
              { class: 'card event', 'data-testid': 'why-event' },
              h(
                'h3',
                null,
                `${ev.kind} `,
                h('code', { title: ev.templateId }, shortTemplate(ev.templateId)),
                h(
                  'span',
                  { class: 'hint', title: ev.contractId },
                  ` contract ${shortId(ev.contractId, 24)} · node ${ev.nodeId}`,
                ),
              ),
              ev.rules.length === 0
                ? empty('No rule looks at this event.')
                : ev.rules.map((r) =>
                    h(
                      'div',
                      { class: 'why-rule', 'data-testid': 'why-rule' },
                      h(
                        'div',
                        { class: 'why-rule-head' },
                        h('strong', null, r.ruleId),
                        ' ',
                        badge(
                          r.fired ? 'succeeded' : 'rejected',
                          r.fired ? 'fires' : 'does not fire',
                        ),
                        r.reason ? h('span', { class: 'hint' }, ` ${r.reason}`) : null,
                      ),
                      r.conditions.length === 0
                        ? null
                        : h(
                            'ol',
                            { class: 'conditions' },
                            r.conditions.map((c) =>
                              h(
                                'li',
                                { class: `cond ${c.result}` },
                                badge(c.result),
                                ' ',
                                h('code', null, c.text),
                                c.detail ? h('div', { class: 'hint' }, c.detail) : null,
                              ),
                            ),
                          ),
                      r.commands.length === 0
                        ? null
                        : h(
                            'details',
                            null,
                            h('summary', null, `${r.commands.length} command(s) it would submit`),
                            code(prettyJson(r.commands)),
                          ),
                    ),
                  ),
            ),
          ),
    );
  };

  const form = h(
    'form',
    {
      class: 'why-form',
      onsubmit: (e) => {
        e.preventDefault();
        void explain();
      },
    },
    input,
    h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'why-submit' }, 'Explain'),
  );

  show(
    root,
    h('div', { class: 'screen-head' }, h('h2', null, 'Why (not)?')),
    h(
      'p',
      { class: 'hint' },
      'Did a rule fire for a transaction, and if not, which condition stopped it? The bot evaluates the update again with the rules in effect now (a rule changed since may answer otherwise than it did then), without submitting anything.',
    ),
    form,
    result,
  );

  return {
    id: 'why',
    title: 'Why (not)',
    root,
    show(arg) {
      const asked = arg === undefined ? '' : fromHash(arg);
      if (asked !== '' && asked !== input.value) {
        input.value = asked;
        void explain();
      } else if (input.value === '') {
        show(
          result,
          empty(
            'Paste the id of a ledger update (or its offset) to see what the rules made of it.',
          ),
        );
      }
      input.focus();
    },
  };
}
