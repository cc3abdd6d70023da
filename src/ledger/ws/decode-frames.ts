/** Maps raw frames to elements, dropping the ones `decode` skips. Closing it closes the source. */
export async function* decodeFrames<T>(
  frames: AsyncIterable<unknown>,
  decode: (frame: unknown) => T | undefined,
): AsyncGenerator<T, void, undefined> {
  for await (const frame of frames) {
    const element = decode(frame);
    if (element !== undefined) yield element;
  }
}
