import { readFileSync } from 'node:fs';

let version: string | undefined;

/** The `version` of ledgerbot's package.json (read once). */
export function ledgerbotVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  return version;
}
