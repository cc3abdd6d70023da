import { LedgerbotError } from '../core/ledgerbot-error.js';

export type DamlLfErrorCode =
  /** Not a zip file, a truncated or inconsistent one, no manifest, or no `Main-Dalf` entry. */
  | 'DAR_CORRUPT'
  /** Over a size limit (`DAR_LIMITS`): the DAR, its entry count, one entry, or all entries. */
  | 'DAR_TOO_LARGE'
  /** A DALF or archive payload that does not decode as a Daml-LF archive. */
  | 'ARCHIVE_CORRUPT'
  /** A DALF or archive payload over `DAR_LIMITS.maxEntryBytes`. */
  | 'ARCHIVE_TOO_LARGE'
  /** Nested deeper, or types larger, than the reader accepts (hostile or broken input). */
  | 'ARCHIVE_TOO_DEEP'
  /** sha256 of the payload is not the archive's hash, or not the id its file name gives. */
  | 'ARCHIVE_HASH_MISMATCH'
  /** A package id that is not 64 lowercase hex characters. */
  | 'BAD_PACKAGE_ID'
  /** A Daml-LF 1 archive (Canton 2.x), or an LF version the reader does not know. */
  | 'UNSUPPORTED_LF_VERSION'
  /** The encoder was given a package draft it cannot write (a dangling reference, a bad name). */
  | 'INVALID_DRAFT';

/**
 * A Daml package that cannot be read (or written). The message names the file (`source`) and,
 * inside a DAR, the entry; both are also fields, for callers that present them differently.
 */
export class DamlLfError extends LedgerbotError<DamlLfErrorCode> {
  readonly source: string;
  readonly entry: string | undefined;

  constructor(
    code: DamlLfErrorCode,
    where: { readonly source: string; readonly entry?: string | undefined },
    problem: string,
    options?: { cause?: unknown },
  ) {
    const place = where.entry === undefined ? where.source : `${where.source} (${where.entry})`;
    super(code, `${place}: ${problem}`, options);
    this.source = where.source;
    this.entry = where.entry;
  }
}

/** Where a problem is: the file, and the entry within a DAR. */
export type ArchiveLocation = { readonly source: string; readonly entry?: string | undefined };
