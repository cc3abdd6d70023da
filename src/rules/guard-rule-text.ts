/** Hard limits that protect the YAML parser from hostile input (checked before it runs). */
export const TEXT_LIMITS = {
  /** Rule files are small; a 4 MiB file holds well over 10,000 rules. */
  MAX_FILE_BYTES: 4 * 1024 * 1024,
  /** Flow collections (`[`, `{`) open at once. */
  MAX_FLOW_DEPTH: 64,
  /** Brackets open at once, even inside quotes: a backstop for the quote-aware count. */
  MAX_RAW_BRACKET_DEPTH: 1000,
  /** Leading spaces of a line: bounds block nesting, which the parser handles recursively. */
  MAX_INDENT: 256,
  /** Aliases expanded when converting the document (YAML "billion laughs"). */
  MAX_ALIAS_COUNT: 100,
} as const;

export type TextProblem = {
  readonly code: 'FILE_TOO_LARGE' | 'YAML_TOO_COMPLEX';
  /** The message for a rule file. */
  readonly message: string;
  /** What limit the text broke, without naming the kind of file (for other YAML inputs). */
  readonly reason: string;
  readonly offset: number;
};

/**
 * Rejects input the YAML parser should never see: oversized files, and nesting deep enough to
 * exhaust its stack (deep flow nesting can even crash the process, so this runs first). The
 * bracket count ignores quoted strings and comments; brackets inside plain scalars still count,
 * which only matters for absurd files.
 */
export function guardRuleText(
  text: string,
  maxBytes: number = TEXT_LIMITS.MAX_FILE_BYTES,
): TextProblem | null {
  // A UTF-16 unit is at least one UTF-8 byte, so the cheap check is exact enough to go first.
  const bytes = text.length > maxBytes ? text.length : new TextEncoder().encode(text).length;
  if (bytes > maxBytes) {
    return {
      code: 'FILE_TOO_LARGE',
      message: `the file is ${formatBytes(bytes)}, more than the ${formatBytes(maxBytes)} a rule file may have: split it into several files in the rules directory`,
      reason: `the file is ${formatBytes(bytes)}, more than the ${formatBytes(maxBytes)} allowed`,
      offset: 0,
    };
  }
  let depth = 0;
  // Counted regardless of quotes, so a stray quote character cannot hide a bracket bomb.
  let rawDepth = 0;
  let quote: string | null = null;
  let lineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      lineStart = true;
      indent = 0;
      continue;
    }
    if (lineStart) {
      if (c === ' ') {
        indent++;
        if (indent > TEXT_LIMITS.MAX_INDENT) {
          return tooComplex(`a line is indented more than ${TEXT_LIMITS.MAX_INDENT} spaces`, i);
        }
        continue;
      }
      lineStart = false;
    }
    if (c === '[' || c === '{') rawDepth++;
    else if ((c === ']' || c === '}') && rawDepth > 0) rawDepth--;
    if (rawDepth > TEXT_LIMITS.MAX_RAW_BRACKET_DEPTH) {
      return tooComplex(
        `more than ${TEXT_LIMITS.MAX_RAW_BRACKET_DEPTH} brackets are open at once`,
        i,
      );
    }
    if (quote !== null) {
      if (quote === '"' && c === '\\') i++;
      else if (c === quote) {
        if (quote === "'" && text[i + 1] === "'") i++;
        else quote = null;
      }
      continue;
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl - 1;
    } else if ((c === '"' || c === "'") && (i === 0 || /[\s[{,:]/.test(text[i - 1]!))) {
      quote = c;
    } else if (c === '[' || c === '{') {
      depth++;
      if (depth > TEXT_LIMITS.MAX_FLOW_DEPTH) {
        return tooComplex(`brackets nest more than ${TEXT_LIMITS.MAX_FLOW_DEPTH} deep`, i);
      }
    } else if ((c === ']' || c === '}') && depth > 0) {
      depth--;
    }
  }
  return null;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`;
}

function tooComplex(reason: string, offset: number): TextProblem {
  return {
    code: 'YAML_TOO_COMPLEX',
    message: `${reason}: rule files do not nest that deep`,
    reason,
    offset,
  };
}

/** The 1-based line and column of `offset` in `text`, without parsing it. */
export function textPos(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, col: offset - start + 1 };
}
