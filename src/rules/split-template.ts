/** A piece of a string that may hold `${{ expr }}` templates. */
export type TemplatePiece =
  | { readonly kind: 'text'; readonly text: string }
  /** `offset` is where `source` starts in the whole string (0-based), for error positions. */
  | { readonly kind: 'expr'; readonly source: string; readonly offset: number };

export type TemplateSplitProblem = { readonly problem: string; readonly offset: number };

const OPEN = '${{';

/** Whether `text` contains a `${{`. Cheap; used to find templates where they are not allowed. */
export function hasTemplate(text: string): boolean {
  return text.includes(OPEN);
}

/**
 * Splits a string into text and `${{ expr }}` pieces. The closing `}}` is the first one outside
 * CEL string literals and outside braces the expression opened itself, so map literals such as
 * `${{ {"a": {"b": 1}} }}` work. `$${{` escapes a literal `${{`.
 */
export function splitTemplate(text: string): TemplatePiece[] | TemplateSplitProblem {
  const pieces: TemplatePiece[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$' + OPEN, i)) {
      literal += OPEN;
      i += OPEN.length + 1;
      continue;
    }
    if (!text.startsWith(OPEN, i)) {
      literal += text[i];
      i++;
      continue;
    }
    const start = i + OPEN.length;
    const end = findClose(text, start);
    if (end < 0) {
      return { problem: '"${{" is not closed: end the expression with "}}"', offset: i };
    }
    const raw = text.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    const source = raw.trim();
    if (source === '') return { problem: 'empty "${{ }}": put an expression inside', offset: i };
    if (literal !== '') pieces.push({ kind: 'text', text: literal });
    literal = '';
    pieces.push({ kind: 'expr', source, offset: start + lead });
    i = end + 2;
  }
  if (literal !== '' || pieces.length === 0) pieces.push({ kind: 'text', text: literal });
  return pieces;
}

function findClose(text: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote !== null) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0 && text[i + 1] === '}') return i;
      if (depth > 0) depth--;
    }
  }
  return -1;
}
