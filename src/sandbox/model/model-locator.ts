import { isScalar, type Document, type LineCounter } from 'yaml';
import { YamlLocator, type YamlPath } from '../../core/yaml-locator.js';
import type { SourcePos } from './model-types.js';

/** The shared YAML locator, plus positions inside a CEL or type expression given as line/col. */
export class ModelLocator extends YamlLocator {
  readonly #lines: LineCounter;
  readonly #source: string;

  constructor(file: string, source: string, doc: Document, lines: LineCounter) {
    super(file, source, doc, lines);
    this.#source = source;
    this.#lines = lines;
  }

  /** The position of line/col (1-based, within the expression) of a scalar's text. */
  exprPos(path: YamlPath, line: number, col: number): SourcePos {
    const node = this.node(path);
    if (!isScalar(node) || !node.range) return this.pos(path);
    const start = node.range[0];
    switch (node.type) {
      case 'QUOTE_DOUBLE':
      case 'QUOTE_SINGLE':
      case 'PLAIN': {
        const base = this.at(start + (node.type === 'PLAIN' ? 0 : 1));
        return line === 1
          ? { file: this.file, line: base.line, col: base.col + col - 1 }
          : { file: this.file, line: base.line + line - 1, col };
      }
      default: {
        // Block scalar: content starts on the line after the `|` or `>` header.
        const header = this.at(start);
        const indent = this.#blockIndent(header.line);
        return { file: this.file, line: header.line + line, col: indent + col };
      }
    }
  }

  /** The indentation of the first content line of a block scalar (line numbers are 1-based). */
  #blockIndent(headerLine: number): number {
    const starts = this.#lines.lineStarts;
    const from = starts[headerLine];
    if (from === undefined) return 0;
    const lineText = this.#source.slice(from, starts[headerLine + 1]);
    return lineText.length - lineText.trimStart().length;
  }
}
