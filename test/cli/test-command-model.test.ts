import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../support/cli-capture.js';

const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-test-model-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

mkdirSync(join(tmp, 'rules'));
writeFileSync(
  join(tmp, 'model.yaml'),
  `package: { name: escrow, version: 1.0.0 }
templates:
  Escrow:Deposit:
    fields: { payer: Party, amount: Numeric 10, reference: Text }
    signatories: [payer]
  Escrow:Record:
    fields: { payer: Party, at: Time, amount: Numeric 10, reference: Text }
    signatories: [payer]
`,
);
writeFileSync(
  join(tmp, 'rules', 'record.yaml'),
  `version: 1
rules:
  - id: record
    on: { created: '#escrow:Escrow:Deposit', party: payer }
    then:
      - create:
          template: '#escrow:Escrow:Record'
          createArguments:
            payer: '\${{ event.createArgument.payer }}'
            at: '\${{ event.effectiveAt }}'
            amount: '\${{ event.createArgument.amount }}'
            reference: '\${{ event.createArgument.reference }}'
        actAs: [payer]
`,
);
writeFileSync(
  join(tmp, 'record.test.yaml'),
  `rules: rules
parties: { payer: Payer::1220aa }
tests:
  - name: records the deposit
    given:
      - created:
          template: '#escrow:Escrow:Deposit'
          effectiveAt: 2025-01-01T00:00:04Z
          createArgument: { payer: payer, amount: '1000.0000000000', reference: '1' }
    expect:
      - create:
          template: '#escrow:Escrow:Record'
          createArguments:
            { payer: payer, at: 2025-01-01T00:00:04Z, amount: '1000.0', reference: '1.0' }
`,
);

async function test(args: string[]): Promise<{ code: number; out: string }> {
  const { code, out } = await cli(['test', '--no-color', ...args]);
  return { code, out };
}

describe('ledgerbot test --model', () => {
  it('compares expected values by the Daml types of the model', async () => {
    // Without the model, "1.0" and "1" both look like decimals.
    expect((await test([join(tmp, 'record.test.yaml')])).code).toBe(0);
    const { code, out } = await test([
      '--model',
      join(tmp, 'model.yaml'),
      join(tmp, 'record.test.yaml'),
    ]);
    expect(code).toBe(1);
    // Time and Numeric still match by value; the Text field is compared as written.
    expect(out).toContain('  - create.createArguments.reference: "1.0"\n');
    expect(out).toContain('  + create.createArguments.reference: "1"\n');
    expect(out).not.toContain('createArguments.at');
    expect(out).not.toContain('createArguments.amount');
  });
});
