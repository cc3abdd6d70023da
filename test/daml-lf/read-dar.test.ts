import { describe, expect, it } from 'vitest';
import { LedgerbotError } from '../../src/core/ledgerbot-error.js';
import { DamlLfError } from '../../src/daml-lf/daml-lf-error.js';
import { manifestText, parseManifest } from '../../src/daml-lf/dar-manifest.js';
import { readDalf, readPackagePayload } from '../../src/daml-lf/read-dalf.js';
import { readDar } from '../../src/daml-lf/read-dar.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import { errorOf } from './error-of.js';

/** readDar / readDalf / readPackagePayload on DARs of our own encoder (runs in a lone clone). */

describe('readDar', () => {
  const dar = syntheticDar();

  it('gives every package, the main one first, with its bytes in both forms', async () => {
    const read = await readDar(dar.bytes, { source: 'synthetic.dar' });
    expect(read.main.packageId).toBe(dar.main.packageId);
    expect(read.packages[0]).toBe(read.main);
    for (const p of read.packages) {
      expect(readDalf(p.bytes, { source: 'x.dalf', packageId: p.packageId }).signature).toEqual(
        p.signature,
      );
      const fromPayload = readPackagePayload(p.payload, { source: 'x', packageId: p.packageId });
      expect(Buffer.from(fromPayload.bytes).equals(Buffer.from(p.bytes))).toBe(true);
    }
  });

  it('does not decode a package it is told it knows (by id), but still checks its hash', async () => {
    const first = await readDar(dar.bytes, { source: 'a.dar' });
    const known = new Map(first.packages.map((p) => [p.packageId, p]));
    const again = await readDar(dar.bytes, { source: 'b.dar', known });
    for (const [i, p] of again.packages.entries()) expect(p).toBe(first.packages[i]);
  });

  it('gives frozen signatures', async () => {
    const read = await readDar(dar.bytes, { source: 'synthetic.dar' });
    const sig = read.main.signature;
    expect(Object.isFrozen(sig)).toBe(true);
    expect(Object.isFrozen(sig.modules[0]!.templates[0]!.fields[0]!.type)).toBe(true);
    expect(() => (sig.modules as unknown[]).push(1)).toThrow(TypeError);
  });

  it('throws DamlLfErrors, which are LedgerbotErrors', () => {
    const err = errorOf(() => readDalf(new Uint8Array([0xff]), { source: 'x.dalf' }));
    expect(err).toBeInstanceOf(DamlLfError);
    expect(err).toBeInstanceOf(LedgerbotError);
    expect(err.name).toBe('DamlLfError');
  });
});

describe('the DAR manifest', () => {
  it('wraps lines at 72 characters and reads them back', () => {
    const long = `${'a'.repeat(70)}/${'b'.repeat(100)}.dalf`;
    const text = manifestText([
      ['Manifest-Version', '1.0'],
      ['Main-Dalf', long],
    ]);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(72);
    expect(parseManifest(text).get('Main-Dalf')).toBe(long);
  });

  it('reads CRLF manifests and stops at the end of the main section', () => {
    const m = parseManifest('Main-Dalf: a/b\r\n c.dalf\r\nName: x\r\n\r\nName: other\r\n');
    expect(m.get('Main-Dalf')).toBe('a/bc.dalf');
    expect(m.get('Name')).toBe('x');
  });
});
