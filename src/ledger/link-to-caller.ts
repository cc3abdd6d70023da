/** The requests in flight under each caller signal: one abort listener per signal, not per request. */
const linkedByCaller = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * Aborts `controller` when `caller` aborts; returns the unlink. A signal shared by many
 * concurrent requests (the bot's, with up to maxInFlight submits) gets a single listener, so
 * there is no listener per request to add and remove, and no MaxListenersExceededWarning.
 */
export function linkToCaller(caller: AbortSignal, controller: AbortController): () => void {
  let linked = linkedByCaller.get(caller);
  if (linked === undefined) {
    const set = new Set<AbortController>();
    linked = set;
    linkedByCaller.set(caller, set);
    caller.addEventListener(
      'abort',
      () => {
        for (const c of set) c.abort(caller.reason);
        set.clear();
      },
      { once: true },
    );
  }
  const set = linked;
  set.add(controller);
  return () => set.delete(controller);
}
