const MiB = 1024 * 1024;

/**
 * What the reader accepts, checked before it allocates: a DAR or DALF comes from a user's file or
 * a participant, and a zip bomb or a deeply nested protobuf must fail with a `DamlLfError`, not
 * exhaust memory or the stack. The real packages are far below each (the largest DAR of the
 * Canton Network's token is ~1.2 MiB, its largest DALF ~2 MiB).
 */
export const DAR_LIMITS = {
  /** The DAR file itself. */
  maxDarBytes: 256 * MiB,
  /** Zip entries in a DAR (every kind: DALFs, sources, interface files). */
  maxEntries: 10_000,
  /** One DALF, inflated (declared or actual), or one archive payload. */
  maxEntryBytes: 64 * MiB,
  /** All the entries the reader inflates (the DALFs and the manifest), declared sizes summed. */
  maxTotalBytes: 512 * MiB,
  /** Nesting of protobuf messages; Daml's own decoder allows 1000 for Daml-LF 2. */
  recursionLimit: 1000,
  /** Nodes of one type after interned types and synonyms are expanded (they can share). */
  maxTypeNodes: 10_000,
  /** Depth of one expanded type. */
  maxTypeDepth: 200,
} as const;
