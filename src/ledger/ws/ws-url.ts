import { LedgerUsageError } from '../ledger-usage-error.js';

/** http→ws and https→wss, keeping any path prefix of the base URL. */
export function wsUrl(base: string, path: string): string {
  const url = URL.canParse(base) ? new URL(base) : undefined;
  const scheme = url === undefined ? undefined : SCHEMES[url.protocol];
  if (url === undefined || scheme === undefined) {
    throw new LedgerUsageError(
      'The ledger URL must start with http://, https://, ws:// or wss://.',
    );
  }
  url.protocol = scheme;
  url.pathname = url.pathname.replace(/\/+$/, '') + path;
  return url.toString();
}

const SCHEMES: Readonly<Record<string, string>> = {
  'http:': 'ws:',
  'https:': 'wss:',
  'ws:': 'ws:',
  'wss:': 'wss:',
};

/** Scheme, host and port only: no path, query or credentials, for error messages. */
export function safeOrigin(base: string): string {
  try {
    const url = new URL(base);
    return `${url.protocol}//${url.host}`;
  } catch {
    return 'the configured URL';
  }
}
