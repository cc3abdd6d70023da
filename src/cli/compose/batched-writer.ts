/**
 * Wraps `write` so that the texts written in one event-loop turn reach it as one string, in a
 * `setImmediate` callback. The bot logs a line per finished intent at info (and one per state
 * change at debug); on a pipe, stdout writes are synchronous system calls, and one per line cost
 * more CPU than the rest of an intent's bookkeeping. The event loop runs the pending callback before the process exits normally; a
 * process killed outright loses at most the current turn's lines (the journal, not the log, is
 * the record).
 */
export function batchedWriter(write: (text: string) => void): (text: string) => void {
  let pending: string[] = [];
  const flush = (): void => {
    const texts = pending;
    pending = [];
    write(texts.length === 1 ? texts[0]! : texts.join(''));
  };
  return (text) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(text);
  };
}
