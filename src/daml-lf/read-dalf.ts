import { create, toBinary } from '@bufbuild/protobuf';
import { buildSignature } from './build-signature.js';
import type { ArchiveLocation } from './daml-lf-error.js';
import { decodeArchive, decodePayload, payloadId } from './decode-archive.js';
import { ArchiveSchema, HashFunction } from './generated/daml_lf_pb.js';
import type { PackageSignature } from './package-signature.js';

/** One Daml package as read: its id, its bytes in both forms, and what it declares. */
export type PackageArchive = {
  /** sha256 of `payload`, 64 lowercase hex characters. */
  readonly packageId: string;
  /** The `Archive` protobuf: what a `.dalf` file holds (hash + payload). */
  readonly bytes: Uint8Array;
  /**
   * The `ArchivePayload` protobuf: what the id is the hash of, and what the JSON Ledger API's
   * `GET /v2/packages/{id}` serves.
   */
  readonly payload: Uint8Array;
  readonly signature: PackageSignature;
};

export type ReadPackageOptions = {
  /** The file or URL the bytes came from, for messages. */
  readonly source: string;
  /** The id the package must have (e.g. from a file name or a request); checked. */
  readonly packageId?: string;
};

/**
 * A `.dalf` file's bytes (an `Archive`): the hash checked against the payload (and against
 * `options.packageId`), the Daml-LF 2 package decoded and its signature built. Throws a
 * `DamlLfError`. No I/O: the caller reads the file.
 */
export function readDalf(bytes: Uint8Array, options: ReadPackageOptions): PackageArchive {
  return readArchiveAt(bytes, { source: options.source }, options.packageId);
}

/**
 * An `ArchivePayload` as `GET /v2/packages/{id}` serves it, checked against the id it was asked
 * for; the archive envelope (`bytes`) is made from it.
 */
export function readPackagePayload(
  payload: Uint8Array,
  options: ReadPackageOptions & { readonly packageId: string },
): PackageArchive {
  const where = { source: options.source };
  const packageId = payloadId(payload, options.packageId, where);
  const bytes = toBinary(
    ArchiveSchema,
    create(ArchiveSchema, { hashFunction: HashFunction.SHA256, payload, hash: packageId }),
  );
  return fromPayload(packageId, bytes, payload, where);
}

/** `readDalf` for an entry of a DAR; `known` packages (by id) are not decoded again. */
export function readArchiveAt(
  bytes: Uint8Array,
  where: ArchiveLocation,
  expectedId: string | undefined,
  known?: ReadonlyMap<string, PackageArchive>,
): PackageArchive {
  const { packageId, payload } = decodeArchive(bytes, where, expectedId);
  return known?.get(packageId) ?? fromPayload(packageId, bytes, payload, where);
}

function fromPayload(
  packageId: string,
  bytes: Uint8Array,
  payload: Uint8Array,
  where: ArchiveLocation,
): PackageArchive {
  const { lfVersion, pkg } = decodePayload(payload, packageId, where);
  const signature = buildSignature(pkg, packageId, lfVersion, where);
  return Object.freeze({ packageId, bytes, payload, signature });
}
