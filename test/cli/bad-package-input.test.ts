import { existsSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDar } from '../../src/daml-lf/write-dar.js';
import { cli } from '../support/cli-capture.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { TestScope } from '../support/test-scope.js';
import {
  archiveOf,
  lf1Payload,
  lf2Payload,
  packageWithField,
  patchZipEntry,
} from '../daml-lf/crafted-input.js';

// Bad package files through every command that reads them: `packages list --dar`,
// `validate --dar`, `test --dar`, `validate --config` and `run --config` with `ledger.packages`. Each is a
// usage error (exit 2) naming the file and where it was named, and `run` starts nothing.

const scope = new TestScope();
afterAll(() => scope.close());
let dir: string;

const dar = syntheticDar();
const mainEntry = (): string => {
  const name = `${dar.main.signature.name}-${dar.main.signature.version}-${dar.main.packageId}`;
  return `${name}/${name}.dalf`;
};
const manifest = (main: string): Uint8Array =>
  new TextEncoder().encode(`Manifest-Version: 1.0\nMain-Dalf: ${main}\nFormat: daml-lf\n\n`);
const payload = lf2Payload(packageWithField({ Sum: { case: 'nat', value: 1n } }));

/** Each bad file: its name, its bytes (or a size for a sparse file), the error code. */
const BAD: readonly { name: string; code: string; bytes?: Uint8Array; size?: number }[] = [
  {
    name: 'truncated.dar',
    code: 'DAR_CORRUPT',
    bytes: dar.bytes.subarray(0, Math.floor(dar.bytes.length / 2)),
  },
  { name: 'not-a-zip.dar', code: 'DAR_CORRUPT', bytes: new TextEncoder().encode('hello\n') },
  {
    name: 'bomb.dar',
    code: 'DAR_TOO_LARGE',
    bytes: patchZipEntry(writeDar({ main: dar.main }), mainEntry(), {
      uncompressedSize: 3 * 2 ** 30,
    }),
  },
  {
    name: 'liar.dar',
    code: 'DAR_CORRUPT',
    bytes: patchZipEntry(
      zipSync({
        'META-INF/MANIFEST.MF': manifest('x/bomb.dalf'),
        'x/bomb.dalf': new Uint8Array(4 * 2 ** 20),
      }),
      'x/bomb.dalf',
      { uncompressedSize: 1000 },
    ),
  },
  { name: 'huge.dar', code: 'DAR_TOO_LARGE', size: 300 * 2 ** 20 },
  {
    name: 'altered.dalf',
    code: 'ARCHIVE_HASH_MISMATCH',
    bytes: archiveOf(payload, 'a'.repeat(64)),
  },
  { name: 'not-hex.dalf', code: 'BAD_PACKAGE_ID', bytes: archiveOf(payload, 'NOT-A-PACKAGE-ID') },
  { name: 'canton2.dalf', code: 'UNSUPPORTED_LF_VERSION', bytes: archiveOf(lf1Payload('15')) },
];

beforeAll(() => {
  dir = scope.tempDir();
  for (const b of BAD) {
    const path = join(dir, b.name);
    if (b.bytes !== undefined) writeFileSync(path, b.bytes);
    else {
      writeFileSync(path, '');
      truncateSync(path, b.size); // sparse: the size is claimed, nothing is written
    }
  }
  writeFileSync(
    join(dir, 'rule.yaml'),
    `version: 1
rules:
  - id: note
    on: { created: '#synthetic-assets:Synthetic.Assets:Token', party: owner }
    then:
      - create: { template: '#synthetic-assets:Synthetic.Assets:Note', createArguments: { owner: '\${{ parties.owner }}', text: hi } }
        actAs: owner
`,
  );
  writeFileSync(
    join(dir, 'rule.test.yaml'),
    `rules: rule.yaml
parties: { owner: Owner::1220aa }
tests:
  - name: no token, no note
    given: []
    expect: []
`,
  );
});

/** A config naming the file in `ledger.packages` (embedded: line 6, url: line 4; column 14). */
function configFor(file: string, ledger: 'embedded' | 'url'): string {
  const path = join(dir, `${file}.${ledger}.config.yaml`);
  const model = join(process.cwd(), 'examples/invoices/model.yaml');
  const lines =
    ledger === 'embedded'
      ? ['ledger:', '  embedded:', `    models: [${model}]`, '    parties: [owner]']
      : ['ledger:', '  url: http://127.0.0.1:9'];
  lines.push(
    '  userId: bot',
    `  packages: [${file}]`,
    ...(ledger === 'url' ? ['parties: { owner: "Owner::1220aa" }'] : []),
    'rules: rule.yaml',
    `state: { dir: ${join(dir, `${file}.${ledger}.state`)} }`,
    '',
  );
  writeFileSync(path, lines.join('\n'));
  return path;
}

describe.each(BAD)('a bad package file: $name', (bad) => {
  it('packages list --dar: exit 2, the file named, the code given', async () => {
    const file = join(dir, bad.name);
    const r = await cli(['packages', 'list', '--dar', file]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(new RegExp(`^ledgerbot: --dar: ${escape(file)}`));
    expect(r.err).toContain(`[${bad.code}]`);
  });

  it('validate --dar: exit 2', async () => {
    const file = join(dir, bad.name);
    const r = await cli(['validate', '--dar', file, join(dir, 'rule.yaml')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(file);
    expect(r.err).toContain(`[${bad.code}]`);
  });

  it('test --dar: exit 2, no test run', async () => {
    const file = join(dir, bad.name);
    const r = await cli(['test', '--dar', file, join(dir, 'rule.test.yaml')]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(new RegExp(`^ledgerbot: --dar: ${escape(file)}`));
    expect(r.err).toContain(`[${bad.code}]`);
  });

  it('validate --config and run --config with it in ledger.packages: exit 2 at the entry; run starts nothing', async () => {
    const config = configFor(bad.name, 'embedded');
    const file = join(dir, bad.name);
    const validate = await cli(['validate', '--config', config, '--offline']);
    expect(validate.code).toBe(2);
    expect(validate.err).toContain(`${config}:6:14: \`ledger.packages\`: ${file}`);
    expect(validate.err).toContain(`[${bad.code}]`);
    const run = await cli(['run', '--config', config]);
    expect(run.code).toBe(2);
    expect(run.err).toContain(`${config}:6:14: \`ledger.packages\`: ${file}`);
    // Nothing started: no sandbox, no store in the state directory.
    const state = join(dir, `${bad.name}.embedded.state`);
    expect(existsSync(state) ? readdirSync(state) : []).toEqual([]);
  });
});

describe('package files that are not there', () => {
  it('a missing file or an empty directory is named with where it was named', async () => {
    const missing = await cli(['packages', 'list', '--dar', join(dir, 'nowhere.dar')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe(
      `ledgerbot: --dar: cannot read ${join(dir, 'nowhere.dar')}: no such file or directory\n`,
    );
    const empty = join(dir, 'empty');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(empty);
    const config = configFor('empty', 'url');
    const r = await cli(['validate', '--config', config, '--offline']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `${config}:4:14: \`ledger.packages\`: no package in the directory ${empty}`,
    );
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
