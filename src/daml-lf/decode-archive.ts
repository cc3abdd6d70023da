import { fromBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { sha256Hex } from '../core/sha256-hex.js';
import { DAR_LIMITS } from './dar-limits.js';
import { DamlLfError, type ArchiveLocation } from './daml-lf-error.js';
import { ArchivePayloadSchema, ArchiveSchema, HashFunction } from './generated/daml_lf_pb.js';
import { PackageSchema, type Package } from './generated/daml_lf2_pb.js';
import { isPackageId } from './package-names.js';

/**
 * The two protobuf layers of a package: the `Archive` envelope of a `.dalf` (hash function, hash,
 * payload bytes) and the `ArchivePayload` (LF version, the `Package`). The id is checked here,
 * before the package is decoded: a package id is the sha256 of the payload bytes.
 */

/** The payload and id of an `Archive` (a `.dalf`), the id checked against the payload's hash. */
export function decodeArchive(
  bytes: Uint8Array,
  where: ArchiveLocation,
  expectedId: string | undefined,
): { readonly packageId: string; readonly payload: Uint8Array } {
  checkSize(bytes, where);
  const archive = decodeMessage(ArchiveSchema, bytes, where, 'a Daml-LF archive (.dalf)');
  if (archive.hashFunction !== HashFunction.SHA256) {
    throw new DamlLfError(
      'ARCHIVE_CORRUPT',
      where,
      `the archive uses hash function ${Number(archive.hashFunction)}; Daml-LF archives use SHA256 (0)`,
    );
  }
  checkId(archive.hash, where, 'the archive’s hash');
  const actual = sha256Hex(archive.payload);
  if (actual !== archive.hash) {
    throw new DamlLfError(
      'ARCHIVE_HASH_MISMATCH',
      where,
      `the archive says its package id is ${archive.hash}, but the sha256 of its payload is ${actual}: the file was altered or damaged`,
    );
  }
  if (expectedId !== undefined) checkExpected(expectedId, actual, where);
  return { packageId: actual, payload: archive.payload };
}

/**
 * The id of an `ArchivePayload` given as it is (what `GET /v2/packages/{id}` serves), checked
 * against the id it was asked for.
 */
export function payloadId(payload: Uint8Array, expectedId: string, where: ArchiveLocation): string {
  checkSize(payload, where);
  const actual = sha256Hex(payload);
  checkExpected(expectedId, actual, where);
  return actual;
}

/** The Daml-LF 2 package of a payload and its LF version ("2.1"); Daml-LF 1 is refused. */
export function decodePayload(
  payload: Uint8Array,
  packageId: string,
  where: ArchiveLocation,
): { readonly lfVersion: string; readonly pkg: Package } {
  const decoded = decodeMessage(ArchivePayloadSchema, payload, where, 'a Daml-LF archive payload');
  const sum = decoded.Sum;
  if (sum.case === 'damlLf1') {
    throw new DamlLfError(
      'UNSUPPORTED_LF_VERSION',
      where,
      `package ${packageId} is Daml-LF 1.${decoded.minor} (Canton 2.x); ledgerbot reads Daml-LF 2 packages (Canton 3.x)`,
    );
  }
  if (sum.case !== 'damlLf2') {
    throw new DamlLfError(
      'UNSUPPORTED_LF_VERSION',
      where,
      `package ${packageId} holds no Daml-LF 2 package (minor version "${decoded.minor}"); ledgerbot reads Daml-LF 2 packages (Canton 3.x)`,
    );
  }
  const lfVersion = `2.${decoded.minor}`;
  const pkg = decodeMessage(PackageSchema, sum.value, where, `a Daml-LF ${lfVersion} package`);
  return { lfVersion, pkg };
}

/** One protobuf message, its errors as `DamlLfError`s (a corrupt or too deeply nested input). */
export function decodeMessage<Desc extends DescMessage>(
  schema: Desc,
  bytes: Uint8Array,
  where: ArchiveLocation,
  what: string,
): MessageShape<Desc> {
  try {
    // Unknown fields are the expressions the generated schema leaves out: skipped, not kept.
    return fromBinary(schema, bytes, {
      readUnknownFields: false,
      recursionLimit: DAR_LIMITS.recursionLimit,
    });
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    if (/recursion depth/.test(text)) {
      throw new DamlLfError(
        'ARCHIVE_TOO_DEEP',
        where,
        `not readable as ${what}: it nests deeper than ${DAR_LIMITS.recursionLimit} levels`,
        { cause: err },
      );
    }
    throw new DamlLfError('ARCHIVE_CORRUPT', where, `not readable as ${what}: ${text}`, {
      cause: err,
    });
  }
}

function checkSize(bytes: Uint8Array, where: ArchiveLocation): void {
  if (bytes.byteLength > DAR_LIMITS.maxEntryBytes) {
    throw new DamlLfError(
      'ARCHIVE_TOO_LARGE',
      where,
      `the archive is ${bytes.byteLength} bytes; the most ledgerbot reads is ${DAR_LIMITS.maxEntryBytes}`,
    );
  }
}

function checkId(id: string, where: ArchiveLocation, what: string): void {
  if (!isPackageId(id)) {
    throw new DamlLfError(
      'BAD_PACKAGE_ID',
      where,
      `${what} "${id.slice(0, 80)}" is not a package id: expected 64 lowercase hex characters (a sha256)`,
    );
  }
}

function checkExpected(expected: string, actual: string, where: ArchiveLocation): void {
  checkId(expected, where, 'the expected package id');
  if (expected !== actual) {
    throw new DamlLfError(
      'ARCHIVE_HASH_MISMATCH',
      where,
      `expected package ${expected}, but the sha256 of the payload is ${actual}`,
    );
  }
}
