import { afterAll, beforeAll, describe } from 'vitest';
import { pgSkipReason, startPgServer, type PgServer } from './pg-server.js';

/**
 * A describe block whose tests share one real PostgreSQL server (`startPgServer`), started
 * before them and closed after them. `body` gets the server as a function, since the server only
 * exists once the block runs. Where `pgSkipReason()` gives a reason (outside CI, without the
 * binaries), the block is skipped and its title says why.
 */
export function describeWithPg(title: string, body: (server: () => PgServer) => void): void {
  const skipReason = pgSkipReason();
  describe.skipIf(skipReason !== undefined)(
    `${title}${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`,
    () => {
      let server: PgServer | undefined;
      beforeAll(async () => {
        server = await startPgServer();
      }, 120_000);
      afterAll(() => server?.close());
      body(() => {
        if (server === undefined) throw new Error('the PostgreSQL test server did not start');
        return server;
      });
    },
  );
}
