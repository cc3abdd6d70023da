// The token form, shown when the bot wants its ops token and the browser has no session yet.
// The token goes to POST /login once; the bot answers with an HttpOnly session cookie, so the
// page never stores the token.
import { ApiError, send } from './api.js';
import { h, show } from './dom.js';

export function loginForm(root: HTMLElement, onDone: () => void): void {
  const input = h('input', {
    type: 'password',
    name: 'token',
    id: 'token',
    autocomplete: 'current-password',
    required: true,
    'data-testid': 'token',
  });
  const message = h('p', {
    class: 'problem',
    role: 'alert',
    hidden: true,
    'data-testid': 'login-error',
  });
  const submit = h(
    'button',
    { type: 'submit', class: 'btn primary', 'data-testid': 'login' },
    'Sign in',
  );
  const form = h(
    'form',
    {
      class: 'login card',
      onsubmit: (e) => {
        e.preventDefault();
        submit.disabled = true;
        void send('POST', '/login', { token: input.value })
          .then(() => {
            input.value = '';
            onDone();
          })
          .catch((err: unknown) => {
            message.hidden = false;
            message.textContent =
              err instanceof ApiError && err.status === 401
                ? 'That token is not right.'
                : `Could not sign in: ${(err as Error).message}`;
            input.select();
          })
          .finally(() => {
            submit.disabled = false;
          });
      },
    },
    h('h2', null, 'Sign in to the ledgerbot console'),
    h(
      'p',
      { class: 'hint' },
      'This bot asks for its ops token (',
      h('code', null, 'http.token'),
      ' in its config). Your browser then keeps a session for 12 hours of use; the page does not store the token.',
    ),
    h('label', { for: 'token' }, 'Ops token'),
    input,
    message,
    submit,
  );
  show(root, form);
  input.focus();
}
