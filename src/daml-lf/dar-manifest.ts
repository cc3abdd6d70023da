/**
 * `META-INF/MANIFEST.MF` of a DAR, a Java manifest: `Name: value` lines of at most 72 bytes, a
 * longer value continued on lines that start with one space. The attributes a DAR carries:
 * `Main-Dalf` (the entry of the main package), `Dalfs` (every DALF entry, comma-separated),
 * `Name`, `Sdk-Version`, `Format: daml-lf`.
 */

export const MANIFEST_ENTRY = 'META-INF/MANIFEST.MF';

/** The main section's attributes (later sections, if any, are ignored). */
export function parseManifest(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let last: string | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (out.size > 0) break;
      continue;
    }
    if (line.startsWith(' ')) {
      if (last !== undefined) out.set(last, (out.get(last) ?? '') + line.slice(1));
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim();
    out.set(last, line.slice(colon + 1).trimStart());
  }
  return out;
}

/** A manifest with these attributes, in this order, each line wrapped at 72 characters. */
export function manifestText(attributes: readonly (readonly [string, string])[]): string {
  const lines: string[] = [];
  for (const [name, value] of attributes) {
    let rest = `${name}: ${value}`;
    lines.push(rest.slice(0, 72));
    rest = rest.slice(72);
    while (rest.length > 0) {
      lines.push(` ${rest.slice(0, 71)}`);
      rest = rest.slice(71);
    }
  }
  return `${lines.join('\n')}\n\n`;
}
