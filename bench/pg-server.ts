import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * A real PostgreSQL server for the tests and the bench (its PostgreSQL rows, `npm run chaos --
 * --store postgres`): Debian's `postgresql` package (`.ci/run` installs it),
 * a fresh cluster made by `initdb` in a temp directory, started by `pg_ctl` on 127.0.0.1 and a
 * free port, trust authentication for the one user `ledgerbot`. `PG_BIN` names another `bin/`.
 *
 * initdb refuses to run as root: as root the cluster belongs to the `postgres` user (Debian's
 * package makes it), or `nobody`, and the server runs as that user through `runuser`.
 */
export type PgServer = {
  /** `postgres://ledgerbot@127.0.0.1:<port>/<database>` for a fresh database. */
  readonly url: (database?: string) => string;
  readonly port: number;
  /** Whether it serves TLS (a self-signed certificate; `?sslmode=require` connects). */
  readonly ssl: boolean;
  /** Creates a new empty database and returns its URL. */
  freshDatabase(prefix?: string): Promise<string>;
  /** Stops the server at once (`pg_ctl -m immediate`, as a crash would) or cleanly. */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again on the same directory and port (after `stop`). */
  start(): void;
  /** Stops it and deletes its directory. Idempotent. */
  close(): void;
};

const inCi = process.env.CI !== undefined && process.env.CI !== '';

/** The directory of `initdb`, `pg_ctl` and `postgres`, or undefined when there is none. */
export function pgBinDir(): string | undefined {
  if (process.env.PG_BIN !== undefined) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(root, versions[0]!, 'bin');
}

/**
 * Why the PostgreSQL tests skip, or undefined when they run: only when the server is missing
 * outside CI. In CI a missing server fails the tests (the start names what is missing).
 */
export function pgSkipReason(): string | undefined {
  if (pgBinDir() !== undefined || inCi) return undefined;
  const reason =
    'no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql, or set PG_BIN)';
  console.warn(`skipped: these tests need a real PostgreSQL: ${reason}`);
  return reason;
}

function serverUser(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const hasPostgres = spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status === 0;
  return hasPostgres ? 'postgres' : 'nobody';
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function run(user: string | undefined, bin: string, args: readonly string[]): void {
  const [cmd, argv] =
    user === undefined ? [bin, [...args]] : ['runuser', ['-u', user, '--', bin, ...args]];
  execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

/** Makes a cluster and starts it. Close it in the test's cleanup (`afterAll`). */
export async function startPgServer(): Promise<PgServer> {
  const bin = pgBinDir();
  if (bin === undefined) {
    throw new Error(
      "no PostgreSQL under /usr/lib/postgresql: CI installs Debian's postgresql (.ci/run)",
    );
  }
  const user = serverUser();
  const root = mkdtempSync(join(tmpdir(), 'ledgerbot-pg-'));
  const data = join(root, 'data');
  if (user !== undefined) {
    const uid = Number(execFileSync('id', ['-u', user]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', user]).toString().trim());
    chownSync(root, uid, gid);
  }
  const port = await freePort();
  run(user, join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'ledgerbot',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
    '--no-locale',
  ]);
  // A self-signed certificate, so a client can ask for TLS (`?sslmode=require`) as it would of a
  // managed database; clients that do not ask connect without it.
  const ssl = hasOpenssl();
  if (ssl) {
    run(user, 'openssl', [
      'req',
      '-new',
      '-x509',
      '-days',
      '2',
      '-nodes',
      '-subj',
      '/CN=ledgerbot-test',
      '-keyout',
      join(data, 'server.key'),
      '-out',
      join(data, 'server.crt'),
    ]);
    chmodSync(join(data, 'server.key'), 0o600);
  }
  let closed = false;
  // fsync off: the tests crash processes (the server's or the bot's), never the machine, and the
  // OS keeps what a process wrote; commits stay synchronous, so a crash loses no commit.
  const start = (): void => {
    run(user, join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-w',
      '-t',
      '60',
      '-l',
      join(root, 'server.log'),
      'start',
      '-o',
      `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c full_page_writes=off${ssl ? ' -c ssl=on' : ''}`,
    ]);
  };
  const stop = (mode: 'fast' | 'immediate' = 'fast'): void => {
    run(user, join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '60', 'stop', '-m', mode]);
  };
  start();
  const url = (database = 'postgres'): string =>
    `postgres://ledgerbot@127.0.0.1:${port}/${database}`;
  let n = 0;
  return {
    url,
    port,
    ssl,
    async freshDatabase(prefix = 'lb') {
      const name = `${prefix}_${process.pid}_${++n}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
    start,
    close() {
      if (closed) return;
      closed = true;
      try {
        stop('immediate');
      } catch {
        // Already stopped: the directory goes either way.
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
