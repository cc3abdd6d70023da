import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on (free when asked; the caller binds it soon).
 *
 * Taken below the kernel's ephemeral range, where a port the kernel gave for `listen(0)` and
 * freed again could be handed at once to another process's outgoing connection (the tests run
 * in parallel, each making many): a PostgreSQL or a bot started on it a moment later then found
 * it in use. Below that range only a caller that names a port takes one.
 */
export async function freePort(): Promise<number> {
  const [low, high] = portsBelowEphemeral();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${low} and ${high}`);
}

/** The ports below the kernel's ephemeral range (Linux: ip_local_port_range), else 20000–32767. */
function portsBelowEphemeral(): [number, number] {
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (first !== undefined && Number.isInteger(first) && first > 12_000) {
      return [10_000, first - 1];
    }
  } catch {
    // not Linux: the usual default
  }
  return [20_000, 32_767];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
