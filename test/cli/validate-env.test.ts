import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, type CliResult } from '../support/cli-capture.js';
import { readConfig } from '../../src/cli/compose/read-config.js';
import { UsageError } from '../../src/cli/usage-error.js';

const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-validate-env-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// Names no environment sets.
const SECRET = 'LEDGERBOT_TEST_UNSET_CLIENT_SECRET_7f3a';
const TOKEN = 'LEDGERBOT_TEST_UNSET_HTTP_TOKEN_7f3a';
const KEY = 'LEDGERBOT_TEST_UNSET_TLS_KEY_7f3a';
const PARTY = 'LEDGERBOT_TEST_UNSET_PARTY_7f3a';

mkdirSync(join(tmp, 'rules'));
writeFileSync(
  join(tmp, 'rules', 'accept.yaml'),
  `version: 1
rules:
  - id: accept
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`,
);

function config(name: string, party = 'Payer::1220aa'): string {
  const path = join(tmp, name);
  writeFileSync(
    path,
    `ledger:
  url: https://participant.example.com
  userId: ledgerbot
  auth:
    type: oauth2
    tokenUrl: https://idp.example.com/token
    clientId: ledgerbot
    clientSecret: \${${SECRET}}
  tls: { certFile: /etc/ledgerbot/client.pem, keyFile: '\${${KEY}}' }
parties: { payer: '${party}' }
rules: rules/
http: { port: 9464, token: '\${${TOKEN}}' }
`,
  );
  return path;
}

function validate(args: string[]): Promise<CliResult> {
  return cli(['validate', ...args]);
}

describe('validate --config without credentials', () => {
  it('reports unset variables of secret fields as notes, and exits 0', async () => {
    const path = config('secrets.yaml');
    const { code, out, err } = await validate(['--config', path]);
    expect(out).toBe('1 file(s), 1 rule(s): valid\n');
    expect(code).toBe(0);
    const notes = err.split('\n').filter((l) => l.includes('is not set'));
    expect(notes).toEqual([
      `note: ${path}:8:19: environment variable ${SECRET} is not set (ledger.auth.clientSecret): not needed to validate, \`run\` needs it (--strict-env makes it an error)`,
      `note: ${path}:9:57: environment variable ${KEY} is not set (ledger.tls.keyFile): not needed to validate, \`run\` needs it (--strict-env makes it an error)`,
      `note: ${path}:12:29: environment variable ${TOKEN} is not set (http.token): not needed to validate, \`run\` needs it (--strict-env makes it an error)`,
    ]);
  });

  it('--strict-env makes them errors (exit 2)', async () => {
    const path = config('strict.yaml');
    const { code, err } = await validate(['--config', path, '--strict-env']);
    expect(code).toBe(2);
    expect(err).toContain(`${path}:8:19: environment variable ${SECRET} is not set`);
    expect(err).toContain(`environment variable ${TOKEN} is not set`);
  });

  it('an unset variable outside the secret fields is still an error', async () => {
    const path = config('party.yaml', `\${${PARTY}}`);
    const { code, err } = await validate(['--config', path]);
    expect(code).toBe(2);
    expect(err).toContain(`environment variable ${PARTY} is not set`);
    expect(err).not.toContain(SECRET);
  });

  it('run (readConfig without onUnsetSecret) still requires every secret', async () => {
    const path = config('run.yaml');
    const error = await readConfig(path, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(`environment variable ${SECRET} is not set`);
    expect((error as Error).message).toContain(`environment variable ${TOKEN} is not set`);
  });
});
