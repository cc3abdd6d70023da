/**
 * Hard limits that protect the YAML parser from hostile input. Each loader passes its own
 * (a rule file may be larger than a config file); anything left out takes these.
 */
export type SourceLimits = {
  /** Size of the text in UTF-8 bytes. */
  readonly maxBytes: number;
  /** Flow collections (`[`, `{`) open at once. */
  readonly maxFlowDepth: number;
  /** Brackets open at once, even inside quotes: a backstop for the quote-aware count. */
  readonly maxRawBracketDepth: number;
  /** Leading spaces of a line: bounds block nesting, which the parser handles recursively. */
  readonly maxIndent: number;
  /** Aliases expanded when converting the document (YAML "billion laughs"). */
  readonly maxAliases: number;
};

export const DEFAULT_SOURCE_LIMITS: SourceLimits = {
  // A 4 MiB rule file holds well over 10,000 rules.
  maxBytes: 4 * 1024 * 1024,
  maxFlowDepth: 64,
  maxRawBracketDepth: 1000,
  maxIndent: 256,
  maxAliases: 100,
};
