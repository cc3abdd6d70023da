// Overview: is the bot running, connected and keeping up; what its intents are doing.
import { h, show } from './dom.js';
import { count, STATE_LABEL, tone } from './format.js';
import type { Screen } from './screen.js';
import { sparkline } from './sparkline.js';
import { INTENT_STATES, type Status } from './types.js';
import { badge, empty, facts, timeEl } from './ui.js';

export function overviewScreen(): Screen & { update(status: Status): void } {
  const root = h('section', { class: 'screen', 'data-testid': 'overview' });
  let last: Status | undefined;

  const render = (): void => {
    const s = last;
    if (s === undefined) {
      show(root, empty('Waiting for the bot’s status…'));
      return;
    }
    const ready = s.ready;
    const connected = s.stream?.connected;
    show(
      root,
      ready !== undefined && !ready.ok
        ? h(
            'div',
            { class: 'banner bad', role: 'alert', 'data-testid': 'not-ready' },
            h('strong', null, 'Not ready: '),
            ready.reason ?? 'no reason given',
          )
        : null,
      h(
        'div',
        { class: 'cards' },
        h(
          'div',
          { class: 'card' },
          h('h3', null, 'Bot'),
          h(
            'p',
            { class: 'big' },
            badge(s.state),
            s.shadow === true ? h('span', { class: 'badge off' }, 'shadow') : null,
          ),
          facts([
            ['Started', timeEl(s.startedAt)],
            ['Ready', ready === undefined ? '–' : ready.ok ? 'yes' : 'no'],
          ]),
        ),
        h(
          'div',
          { class: 'card' },
          h('h3', null, 'Participant'),
          h(
            'p',
            { class: 'big' },
            connected === undefined
              ? '–'
              : badge(connected ? 'active' : 'failed', connected ? 'connected' : 'not connected'),
          ),
          facts([
            ['URL', s.participant?.url ?? '–'],
            ['Version', s.participant?.version ?? 'not known yet'],
            ['Reconnects', count(s.stream?.reconnects)],
          ]),
        ),
        h(
          'div',
          { class: 'card' },
          h('h3', null, 'Progress'),
          h(
            'p',
            {
              class: 'big',
              title: 'offsets between the ledger end and what the bot has processed',
            },
            s.lag === null || s.lag === undefined ? 'lag –' : `lag ${count(s.lag)}`,
          ),
          facts([
            ['Checkpoint', count(s.checkpoint)],
            ['Processed', count(s.processedOffset)],
            ['Ledger end', count(s.ledgerEnd)],
            ['In flight', count(s.inFlight)],
            ['Waiting', count(s.waitingForAdmission)],
          ]),
        ),
        s.fleet === undefined ? null : fleetCard(s.fleet),
      ),
      h(
        'div',
        { class: 'cards' },
        h(
          'div',
          { class: 'card wide' },
          h('h3', null, 'Intents by state'),
          s.intents === null || s.intents === undefined
            ? empty('The journal cannot be read right now.')
            : h(
                'ul',
                { class: 'state-counts', 'data-testid': 'intent-counts' },
                INTENT_STATES.map((state) =>
                  h(
                    'li',
                    null,
                    h(
                      'a',
                      { href: `#intents?state=${state}`, class: `count ${tone(state)}` },
                      h('span', { class: 'n' }, count(s.intents?.[state] ?? 0)),
                      h('span', { class: 'label' }, STATE_LABEL[state]),
                    ),
                  ),
                ),
              ),
        ),
        h(
          'div',
          { class: 'card wide' },
          h('h3', null, 'Submissions'),
          s.rate === undefined ? empty('This bot does not report its rate.') : sparkline(s.rate),
        ),
      ),
    );
  };

  return {
    id: 'overview',
    title: 'Overview',
    root,
    show: render,
    update(status) {
      last = status;
      if (!root.hidden) render();
    },
  };
}

/**
 * A fleet member's card: its fleet, the rules it runs (and those its bot is still starting), the
 * members and the rules nobody holds.
 */
function fleetCard(f: NonNullable<Status['fleet']>): HTMLElement {
  const live = (f.members ?? []).filter((m) => m.live === true).length;
  const unowned = (f.owners ?? []).filter((o) => o.owner === null || o.owner === undefined);
  return h(
    'div',
    { class: 'card', 'data-testid': 'fleet' },
    h('h3', null, `Fleet ${f.name ?? ''}`.trim()),
    h('p', { class: 'big' }, f.error ?? `${count(live)} live member${live === 1 ? '' : 's'}`),
    facts([
      ['This member', f.instanceId ?? '–'],
      ['Runs', (f.running ?? []).join(', ') || 'no rule'],
      ...(f.starting === undefined || f.starting.length === 0
        ? []
        : [['Starting', f.starting.join(', ')] as const]),
      ['Rules', count(f.owners?.length)],
      ['Not held', unowned.length === 0 ? 'none' : unowned.map((o) => o.ruleId).join(', ')],
    ]),
  );
}
