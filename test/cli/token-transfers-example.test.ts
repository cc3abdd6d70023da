import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli } from '../support/cli-capture.js';
import { SHARED_DIR, skipWithoutShared } from '../support/shared-files.js';
import { TestScope } from '../support/test-scope.js';

// examples/token-transfers through the CLI: its rule tests pass and its rules validate against
// its models; its interface rule validates against the real token standard too (splice-amulet's
// DAR carries the standard's packages), which is what "mirroring the standard" promises.

const EXAMPLE = 'examples/token-transfers';
const CONFIG = `${EXAMPLE}/bot.config.yaml`;
const ACCEPT = `${EXAMPLE}/rules/accept-transfers.yaml`;
const AMULET_DAR = 'daml-lf/dars/splice-amulet-0.1.14.dar';

let scope: TestScope;
beforeEach(() => {
  scope = new TestScope();
});
afterEach(() => scope.close());

describe('examples/token-transfers', () => {
  it('its rule tests pass against its models (ledgerbot test --config)', async () => {
    const r = await cli(['test', '--config', CONFIG, '--no-color']);
    expect(r.err).toBe('');
    expect(r.out).toContain('8 passed, 0 failed');
    expect(r.out).toContain("✓ the treasury's small holdings of one instrument are merged");
    expect(r.code).toBe(0);
  });

  it('its rules validate against its models, interface rules included', async () => {
    const r = await cli(['validate', '--config', CONFIG, '--format', 'json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { valid: boolean; rules: string[]; problems: unknown[] };
    expect(report).toMatchObject({
      valid: true,
      rules: ['accept-allow-listed-transfers', 'merge-small-holdings'],
      problems: [],
    });
  });
});

describe.skipIf(skipWithoutShared(AMULET_DAR))(
  'examples/token-transfers against the real token standard (splice-amulet 0.1.14)',
  () => {
    const dar = `${SHARED_DIR}${AMULET_DAR}`;

    it('the transfer acceptance (a TransferInstruction rule) validates with no problem', async () => {
      const r = await cli(['validate', '--dar', dar, '--format', 'json', ACCEPT]);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({
        valid: true,
        rules: ['accept-allow-listed-transfers'],
        problems: [],
      });
    });

    it('the checks are real: a misspelt view field and choice argument fail against the DAR', async () => {
      const bad = readFileSync(ACCEPT, 'utf8')
        .replace('transfer.amount', 'transfer.amout')
        .replace('context: { values', 'contxt: { values');
      const file = join(scope.tempDir(), 'accept.yaml');
      writeFileSync(file, bad);
      const r = await cli(['validate', '--dar', dar, file]);
      expect(r.code).toBe(2);
      expect(r.out).toMatch(/accept\.yaml:\d+:\d+: field "transfer" has no field "amout"/);
      expect(r.out).toMatch(/accept\.yaml:\d+:\d+: ExtraArgs has no field "contxt"/);
    });

    it('the merge reads the real Holding view; only the registry’s own template is not in the DAR', async () => {
      const r = await cli(['validate', '--dar', dar, '--format', 'json', `${EXAMPLE}/rules`]);
      expect(r.code).toBe(0);
      const report = JSON.parse(r.out) as { problems: { code: string; message: string }[] };
      expect(report.problems.map((p) => p.code)).toEqual(['UNKNOWN_PACKAGE']);
      expect(report.problems[0]!.message).toContain('"token-example"');
    });
  },
);
