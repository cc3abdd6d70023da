import {
  isMap,
  isScalar,
  isSeq,
  type Document,
  type LineCounter,
  type Node,
  type Scalar,
} from 'yaml';

export type YamlPath = readonly (string | number)[];

/** A place in a YAML file: 1-based line and column (UTF-16 code units, as editors count them). */
export type YamlPos = { readonly file: string; readonly line: number; readonly col: number };

/**
 * Finds file:line:col for paths into a parsed YAML document, and for offsets inside a scalar's
 * value (e.g. a CEL error inside a quoted `when:`), accounting for quotes, escapes and folding.
 */
export class YamlLocator {
  readonly #doc: Document;
  readonly #lines: LineCounter;
  readonly #text: string;
  readonly file: string;

  constructor(file: string, text: string, doc: Document, lines: LineCounter) {
    this.file = file;
    this.#text = text;
    this.#doc = doc;
    this.#lines = lines;
  }

  at(offset: number): YamlPos {
    const { line, col } = this.#lines.linePos(Math.max(0, Math.min(offset, this.#text.length)));
    return { file: this.file, line, col };
  }

  /** The node at `path`, or undefined (also through aliases, which have no own position). */
  node(path: YamlPath): Node | undefined {
    let node: unknown = this.#doc.contents;
    for (const key of path) {
      if (isMap(node)) {
        node = node.items.find((p) => isScalar(p.key) && p.key.value === key)?.value;
      } else if (isSeq(node) && typeof key === 'number') {
        node = node.items[key];
      } else {
        return undefined;
      }
    }
    return node !== null && typeof node === 'object' && 'range' in node
      ? (node as Node)
      : undefined;
  }

  /** The key node of the last path element (for "unknown key" and "duplicate id" messages). */
  keyNode(path: YamlPath): Scalar | undefined {
    if (path.length === 0) return undefined;
    const parent = this.node(path.slice(0, -1));
    const last = path[path.length - 1];
    if (!isMap(parent)) return undefined;
    const key = parent.items.find((p) => isScalar(p.key) && p.key.value === last)?.key;
    return isScalar(key) ? key : undefined;
  }

  /** Position of the value at `path` (or its key with `key: true`), else of the nearest parent. */
  pos(path: YamlPath, options: { key?: boolean } = {}): YamlPos {
    if (options.key === true) {
      const range = this.keyNode(path)?.range;
      if (range) return this.at(range[0]);
    }
    for (let n = path.length; n >= 0; n--) {
      const range = this.node(path.slice(0, n))?.range;
      if (range) return this.at(range[0]);
    }
    return { file: this.file, line: 1, col: 1 };
  }

  /** Position of character `offset` of the string value at `path`. */
  valuePos(path: YamlPath, offset: number): YamlPos {
    const node = this.node(path);
    if (!isScalar(node) || node.range === undefined || typeof node.value !== 'string') {
      return this.pos(path);
    }
    return this.at(this.#sourceOffset(node, node.value, offset));
  }

  /** Aligns the value's characters with the source text to find where `target` sits. */
  #sourceOffset(node: Scalar, value: string, target: number): number {
    const text = this.#text;
    const [start, end] = node.range!;
    let j = start;
    if (node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE') j++;
    if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') {
      const nl = text.indexOf('\n', j);
      j = nl < 0 ? end : nl + 1;
    }
    let i = 0;
    while (i < target && j < end) {
      const c = value[i];
      const s = text[j];
      if (node.type === 'QUOTE_SINGLE' && s === "'" && text[j + 1] === "'") {
        j += 2;
        i++;
      } else if (node.type === 'QUOTE_DOUBLE' && s === '\\') {
        j += escapeLength(text, j);
        i++;
      } else if (s === c) {
        i++;
        j++;
      } else if (s === '\n' || s === '\r') {
        // A folded line break: the value has a space (or nothing) where the source has \n+indent.
        j++;
        while (j < end && (text[j] === ' ' || text[j] === '\t')) j++;
        if (c === ' ' || c === '\n') i++;
      } else if (s === ' ' || s === '\t') {
        j++;
      } else {
        break;
      }
    }
    return j;
  }
}

function escapeLength(text: string, at: number): number {
  switch (text[at + 1]) {
    case 'x':
      return 4;
    case 'u':
      return 6;
    case 'U':
      return 10;
    default:
      return 2;
  }
}
