/**
 * docs/reliability.md holds the SQLite run's whole record and, between markers, a summary of the
 * latest full run on PostgreSQL and of a fleet (their whole records are files of their own). A
 * run rewrites only its own part: the SQLite run carries the blocks over, the others splice theirs.
 */
const start = (key: string): string => `<!-- chaos:${key}:start -->`;
const end = (key: string): string => `<!-- chaos:${key}:end -->`;

/** `doc` with the block `key` set to `body` (replaced where it is, else appended). */
export function spliceBlock(doc: string, key: string, body: string): string {
  const block = `${start(key)}\n${body.trimEnd()}\n${end(key)}\n`;
  const i = doc.indexOf(start(key));
  const j = doc.indexOf(end(key));
  if (i >= 0 && j > i) return doc.slice(0, i) + block + doc.slice(j + end(key).length + 1);
  return `${doc.trimEnd()}\n\n${block}`;
}

/** `next` with every block `previous` had. */
export function keepBlocks(previous: string, next: string): string {
  let doc = next;
  for (const m of previous.matchAll(
    /<!-- chaos:([a-z-]+):start -->\n([\s\S]*?)<!-- chaos:\1:end -->/g,
  )) {
    doc = spliceBlock(doc, m[1]!, m[2]!);
  }
  return doc;
}

/** The summary a PostgreSQL or fleet run leaves in docs/reliability.md. */
export function summaryBlock(o: {
  readonly title: string;
  readonly command: string;
  readonly recordFile: string;
  readonly machine: string;
  readonly seed: number;
  readonly failures: readonly string[];
  readonly checks: number;
}): string {
  const verdict =
    o.failures.length === 0
      ? `**every check passed** (${o.checks} checks)`
      : `**FAILED**: ${o.failures.join('; ')}`;
  return [
    `## ${o.title}`,
    '',
    `\`${o.command}\`: ${verdict}. ${o.machine} seed ${o.seed}. The whole record, its scenario and every check: [${o.recordFile}](${o.recordFile}).`,
  ].join('\n');
}
