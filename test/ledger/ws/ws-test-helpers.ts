import { FakeClock } from '../../../src/core/fake-clock.js';
import type { Logger } from '../../../src/core/logger.js';
import { SeededRandom } from '../../../src/core/seeded-random.js';
import type { AuthProvider } from '../../../src/ledger/auth/auth-provider.js';
import type { TlsMaterial } from '../../../src/ledger/http-transport.js';
import type { StreamContext } from '../../../src/ledger/ws/stream-context.js';
import type { FakeWsConnection } from '../../support/fake-ws-server.js';
import { specValidator } from '../../support/spec-validator.js';

export const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZS1ib3QifQ.c2VjcmV0LXNpZ25hdHVyZQ';

export type LogLine = { level: string; fields: Record<string, unknown>; msg: string };

/** A Logger that keeps every line, children included. */
export function recordingLogger(
  lines: LogLine[] = [],
  bindings: Record<string, unknown> = {},
): Logger & {
  lines: LogLine[];
} {
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, msg: string): void => {
      lines.push({ level, fields: { ...bindings, ...fields }, msg });
    };
  return {
    lines,
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => recordingLogger(lines, { ...bindings, ...b }),
  };
}

export class StaticAuth implements AuthProvider {
  invalidations = 0;
  constructor(public value: string | undefined) {}
  token(): Promise<string | undefined> {
    return Promise.resolve(this.value);
  }
  invalidate(): void {
    this.invalidations += 1;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A FakeClock whose sleeps complete at once (moving fake time), recording each duration. */
export class AutoClock extends FakeClock {
  readonly sleeps: number[] = [];
  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    const done = super.sleep(ms, signal);
    void this.advance(ms);
    return done;
  }
}

export function testContext(
  url: string,
  extra: {
    auth?: AuthProvider;
    tls?: TlsMaterial;
    clock?: FakeClock;
    logger?: Logger;
    seed?: number;
  } = {},
): StreamContext {
  return {
    url,
    ...(extra.auth === undefined ? {} : { auth: extra.auth }),
    ...(extra.tls === undefined ? {} : { tls: extra.tls }),
    clock: extra.clock ?? new AutoClock(),
    random: new SeededRandom(extra.seed ?? 7),
    logger: extra.logger ?? recordingLogger(),
  };
}

export type FrameSchema =
  | 'JsGetUpdatesResponse'
  | 'CompletionStreamResponse'
  | 'JsGetActiveContractsResponse'
  | 'JsCantonError';

/** Sends a frame after checking it against the strict 3.5 AsyncAPI schema. */
export async function sendValid(
  conn: FakeWsConnection,
  schema: FrameSchema,
  frame: unknown,
): Promise<void> {
  specValidator('asyncapi-3.5').assert(schema, frame);
  await conn.send(frame);
}

/** Collects a stream into an array, with a bound on count so a broken stream cannot hang a test. */
export async function collect<T>(stream: AsyncIterable<T>, max = 10_000): Promise<T[]> {
  const out: T[] = [];
  for await (const x of stream) {
    out.push(x);
    if (out.length >= max) break;
  }
  return out;
}

/** Runs `fn` and returns what it threw (failing when it did not throw). */
export async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** Consumes a stream in the background, keeping what arrived and how it ended. */
export function drain<T>(stream: AsyncIterable<T>): {
  got: T[];
  ended: Promise<{ error?: unknown }>;
} {
  const got: T[] = [];
  const ended = (async () => {
    try {
      for await (const x of stream) {
        got.push(x);
        if (got.length > 100_000) throw new Error('runaway stream');
      }
      return {};
    } catch (error) {
      return { error };
    }
  })();
  return { got, ended };
}
