import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from '../../support/cli-capture.js';
import { syntheticDar } from '../../support/synthetic-dar.js';
import { tempDir } from '../../support/temp-dir.js';

// `ledgerbot sandbox --dar FILE`: a DAR the sandbox cannot register exits 2 with the file named
// (cli.test.ts runs the built binary with a good one).
const tmp = tempDir('ledgerbot-sandbox-dar-');
afterAll(() => tmp.cleanup());

function file(name: string, bytes: Uint8Array | string): string {
  const path = join(tmp.dir, name);
  writeFileSync(path, bytes);
  return path;
}

describe('ledgerbot sandbox --model', () => {
  it('exits 2 when two model files declare the same package name and version', async () => {
    const text = (field: string) =>
      `package: { name: twice, version: 1.0.0 }\ntemplates:\n  M:T:\n    fields: { ${field}: Party }\n    signatories: [${field}]\n`;
    const a = file('a.yaml', text('owner'));
    const b = file('b.yaml', text('holder'));
    const r = await cli(['sandbox', '--port', '0', '--model', a, '--model', b]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${b} and ${a} both describe package twice 1.0.0`);
  });
});

describe('ledgerbot sandbox --dar', () => {
  it('exits 2 naming the DAR for a file that is not one, a truncated one, or none', async () => {
    const dar = syntheticDar().bytes;
    const cases: [string, RegExp][] = [
      [file('text.dar', 'not a zip'), /text\.dar: .*zip/i],
      [file('cut.dar', dar.slice(0, Math.floor(dar.length / 2))), /cut\.dar: /],
      [join(tmp.dir, 'absent.dar'), /cannot read the DAR .*absent\.dar/],
    ];
    for (const [path, message] of cases) {
      const r = await cli(['sandbox', '--port', '0', '--dar', path]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.out).toBe('');
    }
  });

  it('exits 2 with file:line:col for a model that does not match the DAR it describes', async () => {
    const dar = file('assets.dar', syntheticDar().bytes);
    const model = file(
      'assets.yaml',
      'package: { name: synthetic-assets, version: 1.0.0 }\ntemplates:\n  Synthetic.Assets:Note:\n    fields: { owner: Party, text: Int64 }\n    signatories: [owner]\n',
    );
    const r = await cli(['sandbox', '--port', '0', '--dar', dar, '--model', model]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${model}:4:29: declared Int64, but the DAR's type is Text`);
  });
});
