import { REDACTED, redactUrl } from '../../ledger/auth/redact-secrets.js';
import { parseHttpUrl } from '../../ledger/parse-http-url.js';
import type { LedgerEndpoint } from './bot-config.js';
import type { ConfigCheckContext } from './config-problem-list.js';
import type { RawBotConfig } from './raw-bot-config.js';

/**
 * The checks of `ledger` the schema cannot express: exactly one of `url` and `embedded`, URLs
 * that are http(s) without credentials, no alias both allocated and fixed, TLS client files in
 * pairs. Returns the endpoint (model paths as written), or undefined when a problem was added.
 */
export function checkLedgerEndpoint(
  raw: RawBotConfig,
  { at, problems, describe }: ConfigCheckContext,
): LedgerEndpoint | undefined {
  let endpoint: LedgerEndpoint | undefined;
  const { url, embedded } = raw.ledger;
  if (url !== undefined && embedded !== undefined) {
    problems.add(
      at.pos(['ledger', 'embedded'], { key: true }),
      ['ledger'],
      'LEDGER_ENDPOINT',
      '`ledger` has both `url` and `embedded`',
      'keep `url` to connect to a participant, or `embedded` to start the sandbox in-process',
    );
  } else if (url === undefined && embedded === undefined) {
    problems.add(
      at.pos(['ledger'], { key: true }),
      ['ledger'],
      'LEDGER_ENDPOINT',
      '`ledger` has neither `url` nor `embedded`',
      'add `url: http://host:port` (the JSON Ledger API) or `embedded: {models: [...]}`',
    );
  } else if (url !== undefined) {
    const bad = urlProblem(url);
    if (bad === undefined) endpoint = { kind: 'url', url: url.replace(/\/+$/, '') };
    else {
      problems.add(
        at.pos(['ledger', 'url']),
        ['ledger', 'url'],
        'BAD_URL',
        `\`ledger.url\`: ${describe(['ledger', 'url'], shownUrl(url))} ${bad}`,
        'write the JSON Ledger API address, e.g. http://127.0.0.1:7575 or https://participant.example.com',
      );
    }
  } else if (embedded !== undefined) {
    endpoint = {
      kind: 'embedded',
      models: embedded.models,
      parties: embedded.parties,
    };
    embedded.parties.forEach((alias, i) => {
      if (Object.hasOwn(raw.parties, alias)) {
        problems.add(
          at.pos(['ledger', 'embedded', 'parties', i]),
          ['ledger', 'embedded', 'parties', i],
          'DUPLICATE_ALIAS',
          `party alias "${alias}" is both allocated (ledger.embedded.parties) and fixed (parties)`,
          'an alias is either allocated by the embedded sandbox or mapped to an existing party id, not both',
        );
      }
    });
  }
  if (raw.ledger.auth.type === 'oauth2') {
    const bad = urlProblem(raw.ledger.auth.tokenUrl);
    if (bad !== undefined) {
      const path = ['ledger', 'auth', 'tokenUrl'];
      problems.add(
        at.pos(path),
        path,
        'BAD_URL',
        `\`ledger.auth.tokenUrl\`: ${describe(path, shownUrl(raw.ledger.auth.tokenUrl))} ${bad}`,
        "write the identity provider's token endpoint, e.g. https://idp.example.com/oauth/token",
      );
    }
  }
  const tls = raw.ledger.tls;
  if (tls !== undefined && (tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    problems.add(
      at.pos(['ledger', 'tls']),
      ['ledger', 'tls'],
      'MISSING_KEY',
      '`ledger.tls` needs both `certFile` and `keyFile` for a client certificate, or neither',
    );
  }
  return endpoint;
}

/**
 * A URL a problem quotes: its user info and query values redacted (the refusal of a URL with a
 * password must not print the password), as far as the text can be read as a URL at all.
 */
function shownUrl(text: string): string {
  return parseHttpUrl(text).ok
    ? redactUrl(text)
    : text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#@]*@/i, `$1${REDACTED}@`);
}

/** What is wrong with a URL the bot connects to, or undefined. */
export function urlProblem(text: string): string | undefined {
  const checked = parseHttpUrl(text);
  if (!checked.ok) {
    return checked.problem === 'not-a-url' ? 'is not a URL' : 'must start with http:// or https://';
  }
  return checked.hasCredentials
    ? 'must not carry credentials; put them in `ledger.auth`'
    : undefined;
}
