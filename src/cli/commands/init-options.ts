import { parseHttpUrl } from '../../ledger/parse-http-url.js';
import { ALIAS_PATTERN } from '../../runtime/config/bot-config-schema.js';
import { UsageError } from '../usage-error.js';

// The checks on `ledgerbot init`'s flags. Each mistake is a UsageError (exit 2) naming the flag,
// so nothing is written from a flag the config loader would refuse later anyway.

const ALIAS = new RegExp(ALIAS_PATTERN);
/** A Canton party id: a hint, `::`, and the namespace fingerprint. */
const PARTY_ID = /^\S+::[0-9a-fA-F]+$/;
/** `${NAME}` or `${NAME:-default}`: filled in from the environment when the config is read. */
const ENV_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

/** `--url URL`: the participant's JSON Ledger API, as `ledger.url` accepts it. */
export function urlOption(text: string): string {
  const checked = parseHttpUrl(text);
  if (!checked.ok) {
    throw new UsageError(
      checked.problem === 'not-a-url'
        ? `--url ${text}: not a URL; write the JSON Ledger API address, e.g. https://participant.example.com`
        : `--url ${text}: must start with http:// or https://`,
    );
  }
  if (checked.hasCredentials) {
    // A credential in the URL would end up in a file that is committed to git.
    throw new UsageError(
      '--url: must not carry a user or password; the config reads the token from LEDGER_TOKEN',
    );
  }
  return text.replace(/\/+$/, '');
}

/** Every `--party alias=id`, checked: a valid alias, each once, and a party id. */
export function partyOptions(texts: readonly string[]): [string, string][] {
  const parties: [string, string][] = [];
  for (const text of texts) {
    const eq = text.indexOf('=');
    if (eq < 0) {
      throw new UsageError(
        `--party ${text}: expected alias=party-id, e.g. --party approver=Approver::1220abcd`,
      );
    }
    const alias = text.slice(0, eq);
    const id = text.slice(eq + 1);
    if (!ALIAS.test(alias)) {
      throw new UsageError(
        `--party ${text}: the alias "${alias}" must start with a letter and have only letters, digits, - and _`,
      );
    }
    if (parties.some(([a]) => a === alias)) {
      throw new UsageError(`--party ${text}: the alias "${alias}" is given twice`);
    }
    if (!PARTY_ID.test(id) && !ENV_REFERENCE.test(id)) {
      throw new UsageError(
        `--party ${text}: "${id}" is not a party id; a Canton party id looks like Approver::1220abcd… (or write \${VAR} to read it from the environment)`,
      );
    }
    parties.push([alias, id]);
  }
  return parties;
}
