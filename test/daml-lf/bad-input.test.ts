import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { DAR_LIMITS } from '../../src/daml-lf/dar-limits.js';
import { readDalf, readPackagePayload } from '../../src/daml-lf/read-dalf.js';
import { readDar } from '../../src/daml-lf/read-dar.js';
import { writeDar } from '../../src/daml-lf/write-dar.js';
import { syntheticDar } from '../support/synthetic-dar.js';
import {
  archiveOf,
  deepPackagePayload,
  deepTypeBytes,
  lf1Payload,
  lf2Payload,
  packageWithField,
  patchZipEntry,
  typeBytes,
} from './crafted-input.js';
import { asyncErrorOf, errorOf } from './error-of.js';

/**
 * What a user's file or a participant could hand the reader that is not a good package: each is
 * a DamlLfError with a stable code and a message naming the file (and the entry), and nothing is
 * allocated from what a header claims before it is checked.
 */

const MANIFEST = 'META-INF/MANIFEST.MF';
const enc = (text: string): Uint8Array => new TextEncoder().encode(text);
const manifest = (main: string): Uint8Array =>
  enc(`Manifest-Version: 1.0\nMain-Dalf: ${main}\nFormat: daml-lf\n\n`);
const dar = syntheticDar();
const mainEntry = (): string => {
  const name = `${dar.main.signature.name}-${dar.main.signature.version}-${dar.main.packageId}`;
  return `${name}/${name}.dalf`;
};

async function darError(bytes: Uint8Array) {
  return asyncErrorOf(() => readDar(bytes, { source: 'bad.dar' }));
}

describe('readDar refuses a DAR that is not one', () => {
  it('a truncated DAR', async () => {
    const err = await darError(dar.bytes.subarray(0, Math.floor(dar.bytes.length / 2)));
    expect(err.code).toBe('DAR_CORRUPT');
    expect(err.message).toMatch(/^bad\.dar: not a readable DAR \(zip\): /);
    expect(err.source).toBe('bad.dar');
  });

  it('a file that is not a zip at all', async () => {
    const err = await darError(enc('this is a YAML file, not a DAR\n'.repeat(10)));
    expect(err.code).toBe('DAR_CORRUPT');
  });

  it('damaged compressed data', async () => {
    const bytes = Buffer.from(dar.bytes);
    const at = bytes.indexOf(Buffer.from('.dalf')) + 200;
    for (let i = 0; i < 64; i++) bytes[at + i] = 0xff;
    const err = await darError(bytes);
    expect(['DAR_CORRUPT', 'ARCHIVE_CORRUPT', 'ARCHIVE_HASH_MISMATCH']).toContain(err.code);
    expect(err.message).toMatch(/^bad\.dar/);
  });

  it('a zip without a manifest, or whose Main-Dalf is missing or not in it', async () => {
    const dalf = { 'x/p.dalf': dar.main.bytes };
    expect((await darError(zipSync(dalf))).message).toBe(
      'bad.dar: no META-INF/MANIFEST.MF: not a DAR (a DAR is a zip made by `daml build`)',
    );
    const noMain = await darError(zipSync({ ...dalf, [MANIFEST]: enc('Manifest-Version: 1.0\n') }));
    expect(noMain.code).toBe('DAR_CORRUPT');
    expect(noMain.message).toBe('bad.dar (META-INF/MANIFEST.MF): the manifest has no Main-Dalf');
    const elsewhere = await darError(zipSync({ ...dalf, [MANIFEST]: manifest('x/q.dalf') }));
    expect(elsewhere.message).toMatch(/Main-Dalf "x\/q\.dalf" is not in the DAR$/);
  });

  it('an entry in the DAR twice', async () => {
    const zip = zipSync({
      [MANIFEST]: manifest('x/a1.dalf'),
      'x/a1.dalf': dar.main.bytes,
      'x/a2.dalf': dar.main.bytes,
    });
    const err = await darError(patchZipEntry(zip, 'x/a2.dalf', { name: 'x/a1.dalf' }));
    expect(err.code).toBe('DAR_CORRUPT');
    expect(err.entry).toBe('x/a1.dalf');
    expect(err.message).toMatch(/the entry is in the DAR twice/);
  });

  it('an entry compressed with a method a DAR does not use', async () => {
    const zip = writeDar({ main: dar.main });
    const err = await darError(patchZipEntry(zip, mainEntry(), { method: 12 }));
    expect(err.code).toBe('DAR_CORRUPT');
    expect(err.message).toMatch(/compression method 12/);
  });
});

describe('readDar caps sizes before it allocates (zip bombs)', () => {
  it('an entry that claims gigabytes', async () => {
    const zip = writeDar({ main: dar.main });
    const err = await darError(patchZipEntry(zip, mainEntry(), { uncompressedSize: 3 * 2 ** 30 }));
    expect(err.code).toBe('DAR_TOO_LARGE');
    expect(err.entry).toBe(mainEntry());
    expect(err.message).toMatch(
      /declares 3072\.0 MiB inflated; the most ledgerbot reads is 64\.0 MiB/,
    );
  });

  it('an entry that lies about its size: inflates to more, or to fewer, bytes than it declares', async () => {
    const zip = zipSync({
      [MANIFEST]: manifest('x/bomb.dalf'),
      'x/bomb.dalf': new Uint8Array(10 * 2 ** 20),
    });
    const more = await darError(patchZipEntry(zip, 'x/bomb.dalf', { uncompressedSize: 1000 }));
    expect(more.code).toBe('DAR_CORRUPT');
    expect(more.entry).toBe('x/bomb.dalf');
    expect(more.message).toMatch(/inflates to more bytes than its header declares/);
    const fewer = await darError(
      patchZipEntry(zip, 'x/bomb.dalf', { uncompressedSize: 20 * 2 ** 20 }),
    );
    expect(fewer.code).toBe('DAR_CORRUPT');
    expect(fewer.message).toMatch(/inflates to fewer bytes than its header declares/);
  });

  it('entries that claim more than 512 MiB in all', async () => {
    const files: Record<string, Uint8Array> = { [MANIFEST]: manifest('x/0.dalf') };
    for (let i = 0; i < 9; i++) files[`x/${i}.dalf`] = dar.main.bytes;
    let zip: Uint8Array = zipSync(files);
    for (let i = 0; i < 9; i++)
      zip = patchZipEntry(zip, `x/${i}.dalf`, { uncompressedSize: 60 * 2 ** 20 });
    const err = await darError(zip);
    expect(err.code).toBe('DAR_TOO_LARGE');
    expect(err.message).toMatch(/declare more than 512\.0 MiB inflated in all/);
  });

  it('more than 10,000 entries', async () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i <= DAR_LIMITS.maxEntries; i++) files[`src/${i}.daml`] = new Uint8Array(0);
    const err = await darError(zipSync(files, { level: 0 }));
    expect(err.code).toBe('DAR_TOO_LARGE');
    expect(err.message).toBe(
      'bad.dar: the DAR has 10001 entries; the most ledgerbot reads is 10000',
    );
  });

  it('a DAR over 256 MiB, before reading it', async () => {
    const err = await darError(new Uint8Array(DAR_LIMITS.maxDarBytes + 1));
    expect(err.code).toBe('DAR_TOO_LARGE');
    expect(err.message).toBe(
      'bad.dar: the DAR is 256.0 MiB; the most ledgerbot reads is 256.0 MiB',
    );
  });
});

describe('readDar and readDalf check every package id', () => {
  it('a DALF whose hash is not the sha256 of its payload', () => {
    const payload = lf2Payload(packageWithField({ Sum: { case: 'nat', value: 1n } }));
    const err = errorOf(() => readDalf(archiveOf(payload, 'a'.repeat(64)), { source: 'p.dalf' }));
    expect(err.code).toBe('ARCHIVE_HASH_MISMATCH');
    expect(err.message).toMatch(
      /^p\.dalf: the archive says its package id is a{64}, but the sha256 of its payload is [0-9a-f]{64}/,
    );
  });

  it('a DALF in a DAR whose file name gives another id', async () => {
    const other = 'b'.repeat(64);
    const name = `x/p-1.0.0-${other}.dalf`;
    const err = await darError(zipSync({ [MANIFEST]: manifest(name), [name]: dar.main.bytes }));
    expect(err.code).toBe('ARCHIVE_HASH_MISMATCH');
    expect(err.entry).toBe(name);
    expect(err.message).toContain(
      `expected package ${other}, but the sha256 of the payload is ${dar.main.packageId}`,
    );
  });

  it('a package id that is not 64 lowercase hex characters', () => {
    const payload = lf2Payload(packageWithField({ Sum: { case: 'nat', value: 1n } }));
    for (const hash of ['NOT-A-HASH', 'A'.repeat(64), '']) {
      const err = errorOf(() => readDalf(archiveOf(payload, hash), { source: 'p.dalf' }));
      expect(err.code, hash).toBe('BAD_PACKAGE_ID');
      expect(err.message).toMatch(/is not a package id: expected 64 lowercase hex characters/);
    }
    const asked = errorOf(() => readDalf(dar.main.bytes, { source: 'p.dalf', packageId: 'xyz' }));
    expect(asked.code).toBe('BAD_PACKAGE_ID');
  });

  it('an archive payload that is not the package asked for', () => {
    const err = errorOf(() =>
      readPackagePayload(dar.main.payload, {
        source: 'GET /v2/packages/x',
        packageId: 'c'.repeat(64),
      }),
    );
    expect(err.code).toBe('ARCHIVE_HASH_MISMATCH');
    expect(err.message).toMatch(/^GET \/v2\/packages\/x: expected package c{64}/);
  });
});

describe('readDalf refuses what is not a Daml-LF 2 package', () => {
  it('a Daml-LF 1 archive (Canton 2.x), naming its version', () => {
    const err = errorOf(() => readDalf(archiveOf(lf1Payload('15')), { source: 'old.dalf' }));
    expect(err.code).toBe('UNSUPPORTED_LF_VERSION');
    expect(err.message).toMatch(
      /^old\.dalf: package [0-9a-f]{64} is Daml-LF 1\.15 \(Canton 2\.x\); ledgerbot reads Daml-LF 2 packages \(Canton 3\.x\)$/,
    );
  });

  it('a payload with no package in it', () => {
    const err = errorOf(() => readDalf(archiveOf(new Uint8Array(0)), { source: 'empty.dalf' }));
    expect(err.code).toBe('UNSUPPORTED_LF_VERSION');
  });

  it('bytes that are not protobuf, or not an archive', () => {
    const err = errorOf(() => readDalf(enc('\xff\xff\xff\xff garbage'), { source: 'g.dalf' }));
    expect(err.code).toBe('ARCHIVE_CORRUPT');
    expect(err.message).toMatch(/^g\.dalf: not readable as a Daml-LF archive \(\.dalf\): /);
  });

  it('a DALF over 64 MiB', () => {
    const err = errorOf(() =>
      readDalf(new Uint8Array(DAR_LIMITS.maxEntryBytes + 1), { source: 'big.dalf' }),
    );
    expect(err.code).toBe('ARCHIVE_TOO_LARGE');
  });

  it('an interning index out of range, or an interned type that refers to itself', () => {
    const outOfRange = errorOf(() =>
      readDalf(archiveOf(lf2Payload(packageWithField(5))), { source: 'p.dalf' }),
    );
    expect(outOfRange.code).toBe('ARCHIVE_CORRUPT');
    expect(outOfRange.message).toMatch(
      /is not a valid Daml-LF 2 package: interned type 5 does not exist/,
    );
    const selfRef = typeBytes({ Sum: { case: 'internedType', value: 0 } });
    const cycle = errorOf(() =>
      readDalf(archiveOf(lf2Payload(packageWithField(0, [selfRef]))), { source: 'p.dalf' }),
    );
    expect(cycle.code).toBe('ARCHIVE_CORRUPT');
    expect(cycle.message).toMatch(/interned type 0 does not exist or refers to itself/);
    const badName = packageWithField({ Sum: { case: 'nat', value: 1n } });
    badName.metadata!.nameInternedStr = 99;
    const badString = lf2Payload(badName);
    expect(errorOf(() => readDalf(archiveOf(badString), { source: 'p.dalf' })).message).toMatch(
      /interned string 99 does not exist/,
    );
  });
});

describe('readDalf refuses data nested too deep or types too large', () => {
  it('a type nested deeper than the protobuf recursion limit, inline or interned', () => {
    const inline = errorOf(() =>
      readDalf(archiveOf(deepPackagePayload(600)), { source: 'deep.dalf' }),
    );
    expect(inline.code).toBe('ARCHIVE_TOO_DEEP');
    expect(inline.message).toMatch(
      /^deep\.dalf: not readable as a Daml-LF 2\.1 package: it nests deeper than 1000 levels$/,
    );
    const interned = lf2Payload(packageWithField(0, [deepTypeBytes(600)]));
    const err = errorOf(() => readDalf(archiveOf(interned), { source: 'deep.dalf' }));
    expect(err.code).toBe('ARCHIVE_TOO_DEEP');
    expect(err.message).toMatch(
      /not readable as interned type 0: it nests deeper than 1000 levels/,
    );
    // Just under the limit, the same type reads (and is refused only for its depth as a type).
    const shallow = errorOf(() =>
      readDalf(archiveOf(deepPackagePayload(450)), { source: 'deep.dalf' }),
    );
    expect(shallow.message).toMatch(
      /expands to 451 nodes, 451 deep; the most ledgerbot reads is 10000 nodes, 200 deep/,
    );
  });

  it('interned types that share: a type of 2^40 nodes in 40 table entries', () => {
    const types = [typeBytes({ Sum: { case: 'builtin', value: { builtin: 7 } } })];
    for (let i = 1; i <= 40; i++) {
      const prev = { Sum: { case: 'internedType' as const, value: i - 1 } };
      types.push(
        typeBytes({ Sum: { case: 'builtin', value: { builtin: 11, args: [prev, prev] } } }),
      );
    }
    const err = errorOf(() =>
      readDalf(archiveOf(lf2Payload(packageWithField(40, types))), { source: 'wide.dalf' }),
    );
    expect(err.code).toBe('ARCHIVE_TOO_DEEP');
    expect(err.message).toMatch(
      /the type of R\.f in module M in package [0-9a-f]{64} expands to \d+ nodes/,
    );
  });

  it('a chain of interned types deeper than the limit', () => {
    const types = [typeBytes({ Sum: { case: 'builtin', value: { builtin: 7 } } })];
    for (let i = 1; i <= 5000; i++) {
      types.push(
        typeBytes({
          Sum: {
            case: 'builtin',
            value: { builtin: 10, args: [{ Sum: { case: 'internedType', value: i - 1 } }] },
          },
        }),
      );
    }
    const err = errorOf(() =>
      readDalf(archiveOf(lf2Payload(packageWithField(5000, types))), { source: 'chain.dalf' }),
    );
    expect(err.code).toBe('ARCHIVE_TOO_DEEP');
  });
});
