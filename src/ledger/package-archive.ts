import { sha256Hex } from '../core/sha256-hex.js';
import type { CallOptions, HttpTransport } from './http-transport.js';
import { callOptions } from './json-calls.js';
import { LedgerTransportError } from './ledger-transport-error.js';
import { LedgerUsageError } from './ledger-usage-error.js';

/**
 * `GET /v2/packages/{package-id}`, apart from the client class (which is long enough). What
 * Canton sends is the `ArchivePayload` of the package (gRPC `GetPackageResponse.archive_payload`,
 * the bytes the archive's hash is taken over), not the `Archive` envelope a `.dalf` file holds;
 * the `Canton-Package-Hash` header carries the hash (`GetPackageResponse.hash`), which is the
 * package id. A package id is a content hash, so what comes back is checked against it here and
 * a caller never holds bytes that are not the package it asked for.
 */

/** A Daml-LF 2 package id: the sha256 of the archive payload, 64 lowercase hex characters. */
const PACKAGE_ID = /^[0-9a-f]{64}$/;

export function isPackageId(text: string): boolean {
  return PACKAGE_ID.test(text);
}

export type PackageArchiveOptions = CallOptions & {
  /** The largest payload accepted, in bytes (default `MAX_BYTES_ANSWER`, 64 MiB). */
  readonly maxBytes?: number;
};

/**
 * The archive payload of one package, its sha256 checked against `packageId` (and against the
 * `Canton-Package-Hash` header when the answer has one). A mismatch is a `bad-response`
 * LedgerTransportError: the participant, or something in front of it, sent other bytes.
 */
export async function fetchPackageArchive(
  transport: HttpTransport,
  packageId: string,
  options: PackageArchiveOptions = {},
): Promise<Uint8Array> {
  if (!isPackageId(packageId)) {
    throw new LedgerUsageError(
      `"${shortText(packageId)}" is not a package id: expected 64 lowercase hex characters (a sha256).`,
    );
  }
  const path = `/v2/packages/${packageId}`;
  const what = `GET ${path}`;
  const res = await transport.exchange('GET', path, {
    accept: 'bytes',
    ...callOptions(options),
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
  });
  const payload = res.body as Uint8Array;
  const header = res.headers['canton-package-hash'];
  const said = Array.isArray(header) ? header[0] : header;
  if (said !== undefined && said !== packageId) {
    throw mismatch(what, `its Canton-Package-Hash header says ${shortText(said)}`, res.status);
  }
  const actual = sha256Hex(payload);
  if (actual !== packageId) {
    throw mismatch(what, `the sha256 of its ${payload.length} bytes is ${actual}`, res.status);
  }
  return payload;
}

function mismatch(what: string, why: string, status: number): LedgerTransportError {
  return new LedgerTransportError(
    'bad-response',
    what,
    `${what} answered another package: ${why}. Check any proxy or cache in front of the participant.`,
    { status },
  );
}

/** An id for a message: whatever was given, bounded (it may be anything). */
function shortText(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
