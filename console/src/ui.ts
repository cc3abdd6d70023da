// Small pieces every screen uses: state badges, times, empty and error notes, buttons, tables,
// the confirmation dialog and the notices at the bottom of the page.
import { ApiError } from './api.js';
import { h, type Child } from './dom.js';
import { exactTime, relativeTime, tone } from './format.js';

/** A coloured state word. */
export function badge(state: string, label: string = state): HTMLElement {
  return h('span', { class: `badge ${tone(state)}`, 'data-testid': 'state' }, label);
}

/** A time written relative to now, kept current by `tickTimes`; the exact time on hover. */
export function timeEl(iso: string | null | undefined, fallback = '–'): Child {
  if (iso === null || iso === undefined) return fallback;
  const el = h('time', { datetime: iso, title: exactTime(iso) }, relativeTime(iso));
  return el;
}

/** Rewrites every relative time on the page (they go stale as the clock moves). */
export function tickTimes(): void {
  const now = Date.now();
  for (const el of document.querySelectorAll('time[datetime]')) {
    const iso = el.getAttribute('datetime');
    if (iso !== null) el.textContent = relativeTime(iso, now);
  }
}

/** What an empty list means, said in words. */
export function empty(message: string, hint?: string): HTMLElement {
  return h(
    'div',
    { class: 'empty' },
    h('p', null, message),
    hint && h('p', { class: 'hint' }, hint),
  );
}

/** A failed call, as a note in place of the content it should have shown. */
export function problem(err: unknown, what: string): HTMLElement {
  const text =
    err instanceof ApiError
      ? err.status === 404 && err.code === 'NOT_FOUND' && /no endpoint/.test(err.message)
        ? `${what}: this bot does not offer it (an older version?)`
        : `${what}: ${err.message} (${err.code})`
      : `${what}: ${(err as Error).message}`;
  return h('div', { class: 'problem', role: 'alert' }, text);
}

export function button(
  label: string,
  onclick: (event: MouseEvent) => void,
  kind: 'primary' | 'secondary' | 'danger' = 'secondary',
  testid?: string,
): HTMLButtonElement {
  return h(
    'button',
    { type: 'button', class: `btn ${kind}`, onclick, 'data-testid': testid },
    label,
  );
}

/** A table: one header row, then the rows (each a list of cells). */
export function table(
  headers: readonly string[],
  rows: readonly HTMLTableRowElement[],
  testid?: string,
): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { 'data-testid': testid },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          headers.map((t) => h('th', null, t)),
        ),
      ),
      h('tbody', null, rows),
    ),
  );
}

/** A definition list of label → value pairs. */
export function facts(pairs: readonly (readonly [string, Child])[]): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    pairs.map(([label, value]) => [h('dt', null, label), h('dd', null, value)]),
  );
}

/** A JSON value shown as text in a block. */
export function code(text: string): HTMLElement {
  return h('pre', { class: 'code' }, text);
}

let notices: HTMLElement | undefined;

/** A short message at the bottom of the page that goes away by itself. */
export function notify(message: string, kind: 'good' | 'bad' = 'good'): void {
  notices ??= document.getElementById('notices') ?? undefined;
  if (notices === undefined) return;
  const note = h('div', { class: `notice ${kind}`, role: 'status' }, message);
  notices.appendChild(note);
  setTimeout(() => note.remove(), kind === 'bad' ? 8000 : 4000);
}

/** Runs an action of a button, disabling it meanwhile; says how it went. */
export async function act(
  el: HTMLButtonElement,
  run: () => Promise<unknown>,
  done: string,
): Promise<boolean> {
  el.disabled = true;
  try {
    await run();
    notify(done);
    return true;
  } catch (err) {
    notify(err instanceof ApiError ? `${err.message} (${err.code})` : String(err), 'bad');
    return false;
  } finally {
    el.disabled = false;
  }
}

/** Asks before something that cannot be undone; resolves true when the user confirms. */
export function confirmDialog(title: string, body: Child, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm', 'data-testid': 'confirm' });
    const close = (answer: boolean): void => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    dialog.append(
      h('h2', null, title),
      h('div', { class: 'dialog-body' }, body),
      h(
        'div',
        { class: 'dialog-actions' },
        button('Cancel', () => close(false), 'secondary', 'confirm-cancel'),
        button(confirmLabel, () => close(true), 'danger', 'confirm-ok'),
      ),
    );
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      close(false);
    });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
