/** `fn` made idempotent: the first call runs it, later calls do nothing (a release, a close). */
export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
