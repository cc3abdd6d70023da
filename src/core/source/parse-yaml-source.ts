import { LineCounter, parseDocument, type Document } from 'yaml';
import { YamlLocator } from '../yaml-locator.js';
import { formatBytes, guardText, textPos } from './guard-text.js';
import { DEFAULT_SOURCE_LIMITS, type SourceLimits } from './source-limits.js';
import type { SourceProblem } from './source-problem.js';

/** A parsed YAML file: its plain value, and what is needed to point into its text. */
export type YamlSource = {
  readonly file: string;
  readonly text: string;
  readonly doc: Document;
  readonly lines: LineCounter;
  readonly at: YamlLocator;
  /** The document as plain data (aliases expanded, within the limit). */
  readonly value: unknown;
};

export type ParsedYamlSource =
  | { readonly ok: true; readonly source: YamlSource }
  | { readonly ok: false; readonly problems: readonly SourceProblem[] };

export type ParseYamlSourceOptions = {
  /** What the file is, for messages: "rule file", "config file". */
  readonly noun: string;
  /** Any limit left out is the default's (DEFAULT_SOURCE_LIMITS). */
  readonly limits?: Partial<SourceLimits>;
  /** Said after "the file is 9 MiB, more than the 4 MiB a rule file may have: …". */
  readonly tooLargeAdvice?: string;
};

/**
 * Guards, parses and converts one YAML file. Every syntax error is reported (not only the first),
 * each with its position; messages hold only the parser's first line, never a frame of the
 * source, which could show a secret.
 */
export function parseYamlSource(
  file: string,
  text: string,
  options: ParseYamlSourceOptions,
): ParsedYamlSource {
  const limits = { ...DEFAULT_SOURCE_LIMITS, ...options.limits };
  const guard = guardText(text, limits);
  if (guard !== null) {
    const message =
      guard.code === 'FILE_TOO_LARGE'
        ? `the file is ${formatBytes(guard.bytes ?? text.length)}, more than the ${formatBytes(limits.maxBytes)} a ${options.noun} may have${options.tooLargeAdvice === undefined ? '' : `: ${options.tooLargeAdvice}`}`
        : `${guard.reason}: ${options.noun}s do not nest that deep`;
    // A huge file is not scanned for line breaks: its problem is at the start anyway.
    const { line, col } =
      guard.code === 'FILE_TOO_LARGE' ? { line: 1, col: 1 } : textPos(text, guard.offset);
    return { ok: false, problems: [{ file, line, col, path: [], code: guard.code, message }] };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = new YamlLocator(file, text, doc, lines);
  if (doc.errors.length > 0) {
    const syntaxProblem = (e: (typeof doc.errors)[number]): SourceProblem => {
      const message = (e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
      const quote = /^Missing closing (["'])quote/.exec(message)?.[1];
      if (quote !== undefined) {
        // The parser notices at the end of the file; the mistake is where the quote opened.
        return {
          ...at.at(text.lastIndexOf(quote, e.pos[0] - 1)),
          path: [],
          code: 'YAML_SYNTAX',
          message: 'YAML syntax: this quote is never closed',
          hint: `add the closing ${quote} at the end of the value`,
        };
      }
      const hint = yamlSyntaxHint(message);
      return {
        ...at.at(e.pos[0]),
        path: [],
        code: 'YAML_SYNTAX',
        message: `YAML syntax: ${message}`,
        ...(hint === undefined ? {} : { hint }),
      };
    };
    const lineTexts = text.split('\n');
    const comment = flowCommentProblem(file, lineTexts, at.at(doc.errors[0]!.pos[0]).line);
    if (comment !== undefined) return { ok: false, problems: [comment] };
    const problems: SourceProblem[] = [];
    const flagged = new Set<number>();
    for (const e of doc.errors) {
      const { line } = at.at(e.pos[0]);
      const variable = flowVariableProblem(file, line, lineTexts[line - 1] ?? '');
      if (variable === undefined) {
        // After the first unquoted ${VAR} in a flow collection, the rest is its cascade.
        if (flagged.size === 0) problems.push(syntaxProblem(e));
      } else if (!flagged.has(line)) {
        flagged.add(line);
        problems.push(variable);
      }
    }
    return { ok: false, problems };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxAliases });
  } catch (error) {
    return {
      ok: false,
      problems: [
        {
          ...at.pos([]),
          path: [],
          code: 'YAML_TOO_COMPLEX',
          message: `the file expands too many aliases (*name references): ${(error as Error).message}`,
          hint: 'write the values out instead of nesting aliases',
        },
      ],
    };
  }
  return { ok: true, source: { file, text, doc, lines, at, value } };
}

/**
 * `auth: { token: ${TOKEN} }`: inside `{ }` or `[ ]` the braces of an unquoted `${VAR}` end the
 * value, and the parser reports a cascade of errors from there that never names the cause.
 */
function flowVariableProblem(file: string, line: number, text: string): SourceProblem | undefined {
  const col = flowMistakes(text).variable;
  if (col === undefined) return undefined;
  const name = /^\$\{([^}\s]*)/.exec(text.slice(col - 1))?.[1] ?? 'VAR';
  return {
    file,
    line,
    col,
    path: [],
    code: 'YAML_SYNTAX',
    message: `YAML syntax: \${${name}} inside { } or [ ] needs quotes`,
    hint: `write "\${${name}}": in a flow mapping or list, { and } cannot be part of a plain value`,
  };
}

/**
 * `on: { created: #invoices:Invoice:Invoice, party: payer }`: an unquoted ` #` starts a comment,
 * so the `{` before it is never closed, and the parser complains lines later. The first line up
 * to the first error's where that happens is the mistake.
 */
function flowCommentProblem(
  file: string,
  lines: readonly string[],
  upTo: number,
): SourceProblem | undefined {
  for (let n = 1; n <= Math.min(upTo, lines.length); n++) {
    const col = flowMistakes(lines[n - 1]!).comment;
    if (col === undefined) continue;
    return {
      file,
      line: n,
      col,
      path: [],
      code: 'YAML_SYNTAX',
      message: 'YAML syntax: # starts a comment here, so the { or [ before it is never closed',
      hint: 'quote a value that starts with #, e.g. "#invoices:Invoice:Invoice"',
    };
  }
  return undefined;
}

/**
 * Where a line goes wrong inside `{ }` or `[ ]`: the column of an unquoted `${` after a `{` or
 * `[` (`variable`), and of a comment's `#` while one is still open (`comment`). Quotes are
 * skipped; the scan ends at the comment.
 */
function flowMistakes(line: string): { variable?: number; comment?: number } {
  let quote: string | undefined;
  let depth = 0;
  let flow = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{' || ch === '[') {
      depth++;
      flow = true;
    } else if (ch === '}' || ch === ']') depth = Math.max(0, depth - 1);
    else if (ch === '#' && (i === 0 || line[i - 1] === ' ')) {
      return depth > 0 ? { comment: i + 1 } : {};
    } else if (ch === '$' && line[i + 1] === '{' && flow) return { variable: i + 1 };
  }
  return {};
}

function yamlSyntaxHint(message: string): string | undefined {
  if (/unique/i.test(message)) {
    return 'each key may appear once per mapping; remove or rename the repeated one';
  }
  if (/tab/i.test(message)) return 'indent with spaces, not tabs';
  if (/indent/i.test(message)) {
    return 'check the indentation: items of the same list or mapping line up';
  }
  return undefined;
}
