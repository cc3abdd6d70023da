import { DEFAULT_SOURCE_LIMITS, type SourceLimits } from './source-limits.js';

/** Why a text was refused before parsing; `reason` names the limit, not the kind of file. */
export type TextGuardProblem = {
  readonly code: 'FILE_TOO_LARGE' | 'YAML_TOO_COMPLEX';
  readonly reason: string;
  readonly offset: number;
  /** The text's size in UTF-8 bytes, when it is too large. */
  readonly bytes?: number;
};

/**
 * Rejects input the YAML parser should never see: oversized text, and nesting deep enough to
 * exhaust its stack (deep flow nesting can even crash the process, so this runs first). The
 * bracket count ignores quoted strings and comments; brackets inside plain scalars still count,
 * which only matters for absurd files.
 */
export function guardText(
  text: string,
  limits: SourceLimits = DEFAULT_SOURCE_LIMITS,
): TextGuardProblem | null {
  const { maxBytes, maxIndent, maxFlowDepth, maxRawBracketDepth } = limits;
  // A UTF-16 unit is at least one UTF-8 byte, so the cheap check is exact enough to go first.
  const bytes = text.length > maxBytes ? text.length : new TextEncoder().encode(text).length;
  if (bytes > maxBytes) {
    return {
      code: 'FILE_TOO_LARGE',
      reason: `the file is ${formatBytes(bytes)}, more than the ${formatBytes(maxBytes)} allowed`,
      offset: 0,
      bytes,
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
        if (indent > maxIndent)
          return tooComplex(`a line is indented more than ${maxIndent} spaces`, i);
        continue;
      }
      lineStart = false;
    }
    if (c === '[' || c === '{') rawDepth++;
    else if ((c === ']' || c === '}') && rawDepth > 0) rawDepth--;
    if (rawDepth > maxRawBracketDepth) {
      return tooComplex(`more than ${maxRawBracketDepth} brackets are open at once`, i);
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
      if (depth > maxFlowDepth)
        return tooComplex(`brackets nest more than ${maxFlowDepth} deep`, i);
    } else if ((c === ']' || c === '}') && depth > 0) {
      depth--;
    }
  }
  return null;
}

/** "9.8 MiB", "12 KiB". */
export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : `${Math.ceil(n / 1024)} KiB`;
}

function tooComplex(reason: string, offset: number): TextGuardProblem {
  return { code: 'YAML_TOO_COMPLEX', reason, offset };
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
