/**
 * Reading a binary answer (a Daml package) with a cap, for the HTTP transport: the bytes are
 * counted as they arrive, so an answer larger than the cap is refused without being held whole.
 */

/**
 * The default cap of a binary answer (`accept: 'bytes'`): 64 MiB, the largest Daml package the
 * Daml-LF reader accepts (a DAR entry's inflated size), so a package the reader would refuse is
 * not downloaded whole first.
 */
export const MAX_BYTES_ANSWER = 64 * 1024 * 1024;

/** A binary body over its cap (see `readCappedBody`). */
export class BodyTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`body over ${limit} bytes`);
    this.limit = limit;
  }
}

/**
 * The body's bytes, counted as they arrive: past `limit` the body is destroyed (the socket is
 * not kept for reuse) and BodyTooLarge thrown, so a huge answer is never held whole.
 */
export async function readCappedBody(
  body: AsyncIterable<unknown> & { destroy(): unknown },
  limit: number,
): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      body.destroy();
      throw new BodyTooLarge(limit);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
}
