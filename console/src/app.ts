// The console's entry point (loaded by index.html as an ES module): asks the bot whether a
// session is needed, then builds the shell (header, tabs, screens), follows the hash for the
// screen to show and keeps everything current from the live stream.
import { get, send, whenUnauthorised } from './api.js';
import { deadLettersScreen } from './dead-letters-screen.js';
import { h, show } from './dom.js';
import { intentsScreen } from './intents-screen.js';
import { debounced, startLive } from './live.js';
import { loginForm } from './login.js';
import { overviewScreen } from './overview.js';
import { reloadScreen } from './reload-screen.js';
import { rulesScreen } from './rules-screen.js';
import type { Screen } from './screen.js';
import type { RuleRow, Session, Status } from './types.js';
import { badge, problem, tickTimes } from './ui.js';
import { whyScreen } from './why-screen.js';

const app = document.getElementById('app')!;
let stopLive: (() => void) | undefined;

async function boot(): Promise<void> {
  stopLive?.();
  stopLive = undefined;
  let session: Session;
  try {
    session = await get<Session>('/session');
  } catch (err) {
    show(app, h('div', { class: 'login card' }, problem(err, 'Reaching the bot')));
    return;
  }
  if (session.authRequired && !session.authenticated) {
    loginForm(app, () => void boot());
    return;
  }
  start(session);
}

function start(session: Session): void {
  const permissions = { readOnly: session.readOnly };
  document.body.classList.toggle('read-only', session.readOnly);

  // The rules, shared by the rules screen and the intents screen's filter.
  let ruleRows: RuleRow[] | undefined;
  let revision: number | null = null;
  let rulesError: unknown;
  const refreshRules = async (): Promise<void> => {
    try {
      const body = await get<{ rules: RuleRow[]; revision: number | null }>('/rules');
      const first = ruleRows === undefined;
      ruleRows = body.rules;
      revision = body.revision;
      rulesError = undefined;
      // The intents screen's rule filter lists the rules: shown before they came, it redraws.
      if (first) intents.changed();
    } catch (err) {
      rulesError = err;
    }
    rules.render();
  };

  const overview = overviewScreen();
  const rules = rulesScreen(permissions, {
    rows: () => ruleRows,
    revision: () => revision,
    error: () => rulesError,
    refresh: refreshRules,
  });
  const intents = intentsScreen(() => (ruleRows ?? []).map((r) => r.id));
  const deadLetters = deadLettersScreen(permissions);
  const why = whyScreen();
  const reload = reloadScreen(permissions);
  const screens: Screen[] = [overview, rules, intents, deadLetters, why, reload];

  const stateBadge = h('span', { 'data-testid': 'bot-state' });
  const connection = h('span', { class: 'connection', 'data-testid': 'connection' }, 'connecting…');
  const deadLetterCount = h('span', { class: 'tab-count', hidden: true });
  const tabs = screens.map((s) =>
    h(
      'a',
      { href: `#${s.id}`, class: 'tab', 'data-testid': `tab-${s.id}` },
      s.title,
      s === deadLetters ? deadLetterCount : null,
    ),
  );
  const signOut = session.authRequired
    ? h(
        'button',
        {
          type: 'button',
          class: 'btn link',
          onclick: () => void send('POST', '/logout').finally(() => void boot()),
        },
        'Sign out',
      )
    : null;
  show(
    app,
    h(
      'header',
      { class: 'top' },
      h(
        'div',
        { class: 'brand' },
        h('span', { class: 'logo', 'aria-hidden': 'true' }),
        'ledgerbot',
      ),
      stateBadge,
      session.readOnly
        ? h(
            'span',
            {
              class: 'badge off',
              'data-testid': 'read-only',
              title: 'http.readOnly: the console shows, it does not change anything',
            },
            'read-only',
          )
        : null,
      h('span', { class: 'spacer' }),
      connection,
      signOut,
    ),
    h('nav', { class: 'tabs' }, tabs),
    h(
      'main',
      null,
      screens.map((s) => s.root),
    ),
    h('div', { id: 'notices', 'aria-live': 'polite' }),
  );

  const route = (): void => {
    const hash = location.hash.slice(1) || 'overview';
    const cut = hash.search(/[/?]/);
    const id = cut < 0 ? hash : hash.slice(0, cut);
    const arg = cut < 0 ? undefined : hash[cut] === '?' ? hash.slice(cut) : hash.slice(cut + 1);
    const screen = screens.find((s) => s.id === id) ?? overview;
    for (const s of screens) s.root.hidden = s !== screen;
    tabs.forEach((t, i) => t.classList.toggle('active', screens[i] === screen));
    document.title = `${screen.title} · ledgerbot`;
    screen.show(arg);
  };
  window.onhashchange = route;

  const onStatus = (status: Status): void => {
    show(stateBadge, badge(status.state, `bot ${status.state}`));
    const dead = status.intents?.['dead-lettered'] ?? status.deadLetters ?? 0;
    deadLetterCount.hidden = dead === 0;
    deadLetterCount.textContent = String(dead);
    overview.update(status);
  };
  const intentsChanged = debounced(() => intents.changed());
  const deadLettersChanged = debounced(() => deadLetters.changed());
  const rulesChanged = debounced(() => void refreshRules());

  void refreshRules();
  void get<Status>('/status').then(onStatus, () => undefined);
  route();
  stopLive = startLive({
    status: onStatus,
    intents: (list) => {
      intentsChanged();
      if (list.some((i) => i.state === 'dead-lettered' || i.state === 'pending'))
        deadLettersChanged();
    },
    rules: (rows, removed) => {
      if (ruleRows === undefined || removed) return rulesChanged();
      const byId = new Map(rows.map((r) => [r.id, r]));
      ruleRows = ruleRows.map((r) => byId.get(r.id) ?? r);
      if (rows.some((r) => !ruleRows!.some((x) => x.id === r.id))) rulesChanged();
      rules.render();
    },
    poll: () => {
      intentsChanged();
      deadLettersChanged();
      rulesChanged();
    },
    reload: (last) => {
      rulesChanged();
      reload.changed(last);
    },
    connection: (state) => {
      connection.textContent =
        state === 'live'
          ? '● live'
          : state === 'polling'
            ? '● updating every 5 s'
            : '● bot not answering';
      connection.className = `connection ${state}`;
    },
  });
}

whenUnauthorised(() => void boot());
setInterval(tickTimes, 10_000);
void boot();
