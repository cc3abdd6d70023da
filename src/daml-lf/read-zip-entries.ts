import type { Readable } from 'node:stream';
import { inflateRawSync } from 'node:zlib';
import type { Entry, ZipFile } from 'yauzl';
import { DAR_LIMITS } from './dar-limits.js';
import { DamlLfError, type ArchiveLocation } from './daml-lf-error.js';

/**
 * The entries of a zip file (a DAR) that `wanted` selects, inflated, every size checked against
 * `DAR_LIMITS` before anything is allocated. yauzl reads the central directory and checks that
 * each entry's data lies inside the file; node's zlib inflates an entry in one call, stopped as
 * soon as it would exceed the entry's declared size (itself capped first), and an entry that
 * inflates to fewer bytes is refused too. (yauzl's own inflating streams check the same, but
 * took 3-5 times as long on the shared DARs.) Entries that are not wanted (sources, interface
 * files) are never inflated.
 */
export async function readZipEntries(
  bytes: Uint8Array,
  source: string,
  wanted: (name: string) => boolean,
): Promise<Map<string, Uint8Array>> {
  const limits = DAR_LIMITS;
  if (bytes.byteLength > limits.maxDarBytes) {
    throw new DamlLfError(
      'DAR_TOO_LARGE',
      { source },
      `the DAR is ${mib(bytes.byteLength)}; the most ledgerbot reads is ${mib(limits.maxDarBytes)}`,
    );
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Loaded at the first DAR, not by every `run` (a warm start reads no DAR: its packages come
  // from the participant's cache). Through `default`: `run`'s bundle gives a dynamic import of a
  // CommonJS package a default export only (Node gives both).
  const { fromBufferPromise } = (await import('yauzl')).default;
  let zip: ZipFile;
  try {
    zip = await fromBufferPromise(buffer, { validateEntrySizes: true, strictFileNames: true });
  } catch (err) {
    throw corrupt(source, undefined, err);
  }
  if (zip.entryCount > limits.maxEntries) {
    throw new DamlLfError(
      'DAR_TOO_LARGE',
      { source },
      `the DAR has ${zip.entryCount} entries; the most ledgerbot reads is ${limits.maxEntries}`,
    );
  }
  let name: string | undefined;
  try {
    // The directory first: every limit is checked before anything is inflated.
    const entries = new Map<string, Entry>();
    let total = 0;
    for await (const entry of zip.eachEntry()) {
      name = entry.fileName;
      if (name.endsWith('/') || !wanted(name)) continue;
      checkEntry(entry, entries.has(name), (total += entry.uncompressedSize), {
        source,
        entry: name,
      });
      entries.set(name, entry);
    }
    const out = new Map<string, Uint8Array>();
    for (const [entryName, entry] of entries) {
      name = entryName;
      const data = await readAll(
        await zip.openReadStreamPromise(entry, { decodeFileData: false }),
        entry.compressedSize,
      );
      const size = entry.uncompressedSize;
      const inflated = entry.compressionMethod === STORED ? data : inflate(data, size);
      if (inflated.byteLength !== size) {
        throw new Error(
          `not enough bytes in the entry: ${inflated.byteLength} of the declared ${size}`,
        );
      }
      out.set(name, inflated);
    }
    return out;
  } catch (err) {
    if (err instanceof DamlLfError) throw err;
    throw corrupt(source, name, err);
  } finally {
    zip.close();
  }
}

function checkEntry(entry: Entry, twice: boolean, total: number, where: ArchiveLocation): void {
  const limits = DAR_LIMITS;
  if (twice) throw new DamlLfError('DAR_CORRUPT', where, 'the entry is in the DAR twice');
  const size = entry.uncompressedSize;
  if (size > limits.maxEntryBytes) {
    throw new DamlLfError(
      'DAR_TOO_LARGE',
      where,
      `the entry declares ${mib(size)} inflated; the most ledgerbot reads is ${mib(limits.maxEntryBytes)} (a zip bomb?)`,
    );
  }
  if (total > limits.maxTotalBytes) {
    throw new DamlLfError(
      'DAR_TOO_LARGE',
      where,
      `the DAR's entries declare more than ${mib(limits.maxTotalBytes)} inflated in all (a zip bomb?)`,
    );
  }
  const method = entry.compressionMethod;
  if (entry.isEncrypted() || (method !== STORED && method !== DEFLATED)) {
    throw new DamlLfError(
      'DAR_CORRUPT',
      where,
      `the entry is encrypted or uses compression method ${method} (a DAR uses deflate)`,
    );
  }
}

const STORED = 0;
const DEFLATED = 8;

function inflate(data: Uint8Array, size: number): Uint8Array {
  try {
    // maxOutputLength must be positive; an empty entry inflates to nothing either way.
    return inflateRawSync(data, { maxOutputLength: Math.max(size, 1) });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new Error(`too many bytes in the entry: more than the declared ${size}`, {
        cause: err,
      });
    }
    throw err;
  }
}

/** The stream's bytes in a buffer of the declared size (yauzl fails the stream on any other). */
async function readAll(stream: Readable, size: number): Promise<Uint8Array> {
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (at + chunk.length > size) {
      stream.destroy();
      throw new Error(`too many bytes in the stream: more than the declared ${size}`);
    }
    chunk.copy(out, at);
    at += chunk.length;
  }
  if (at !== size) throw new Error(`not enough bytes in the stream: ${at} of the declared ${size}`);
  return out;
}

function corrupt(source: string, entry: string | undefined, err: unknown): DamlLfError {
  const text = err instanceof Error ? err.message : String(err);
  const problem = /too many bytes/.test(text)
    ? 'the entry inflates to more bytes than its header declares (a zip bomb, or a corrupt DAR)'
    : /not enough bytes/.test(text)
      ? 'the entry inflates to fewer bytes than its header declares (a truncated or corrupt DAR)'
      : `not a readable DAR (zip): ${text}`;
  return new DamlLfError('DAR_CORRUPT', { source, entry }, problem, { cause: err });
}

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : `${bytes} bytes`;
}
