import { tempDir } from './temp-dir.js';

type Cleanup = () => unknown;

/**
 * What one test started (sandboxes, bots, clients, temp dirs), to be stopped whatever happens.
 * `close` runs the cleanups last-registered first, each on its own: one that throws does not keep
 * the others from running (a bot that fails to stop still has its sandbox stopped and its
 * directory removed), and the failures are rethrown together afterwards.
 */
export class TestScope {
  readonly #cleanups: Cleanup[] = [];
  #closed = false;

  /** Registers a cleanup; returns `value` so a start can be wrapped: `scope.defer(x, () => x.stop())`. */
  defer<T>(value: T, cleanup: Cleanup): T {
    if (this.#closed) throw new Error('the test scope is closed');
    this.#cleanups.push(cleanup);
    return value;
  }

  /** Registers something with a `stop()` (a bot, a sandbox) or `close()` (a ledger, a client). */
  own<T extends { stop(): unknown } | { close(): unknown }>(value: T): T {
    return this.defer(value, () => ('stop' in value ? value.stop() : value.close()));
  }

  /** A fresh temp directory, removed when the scope closes. */
  tempDir(prefix?: string): string {
    const t = tempDir(prefix);
    return this.defer(t.dir, () => t.cleanup());
  }

  async close(): Promise<void> {
    this.#closed = true;
    const errors: unknown[] = [];
    for (const cleanup of this.#cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} cleanups failed`);
  }
}

/**
 * Runs `body` with a fresh scope and closes the scope afterwards, also when `body` throws (its
 * error wins over a cleanup's, which would only hide the cause).
 */
export async function withScope<T>(body: (scope: TestScope) => Promise<T>): Promise<T> {
  const scope = new TestScope();
  let result: T;
  try {
    result = await body(scope);
  } catch (err) {
    await scope.close().catch(() => undefined);
    throw err;
  }
  await scope.close();
  return result;
}
