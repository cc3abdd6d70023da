/**
 * Polls `probe` until it returns a value `done` accepts, or fails after `timeoutMs` with what it
 * waited for and the last value (so a failure shows how far things got). Polls every 20 ms at
 * first, backing off to 200 ms.
 */
export async function waitFor<T>(
  probe: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T | undefined;
  for (let i = 0; ; i++) {
    last = await probe();
    if (done(last)) return last;
    if (Date.now() > until) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`,
      );
    }
    await new Promise((r) => setTimeout(r, Math.min(200, 20 + i * 20)));
  }
}
