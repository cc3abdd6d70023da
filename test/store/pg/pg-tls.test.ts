import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/fake-clock.js';
import { libpqUrl } from '../../../src/store/pg/libpq-url.js';
import { openPgQueries } from '../../../src/store/pg/open-pg-queries.js';
import { openPgStore } from '../../../src/store/pg/open-pg-store.js';
import { describeWithPg } from '../../support/describe-with-pg.js';

describe('libpqUrl', () => {
  it("asks node-postgres for libpq's sslmode, unless the URL says", () => {
    expect(libpqUrl('postgres://u:p@h:5432/db?sslmode=require')).toBe(
      'postgres://u:p@h:5432/db?sslmode=require&uselibpqcompat=true',
    );
    for (const same of [
      'postgres://u:p@h:5432/db',
      'postgres://u:p@h:5432/db?sslmode=verify-full&uselibpqcompat=false',
      'not a url',
    ]) {
      expect(libpqUrl(same)).toBe(same);
    }
  });
});

describeWithPg('a PostgreSQL with a self-signed certificate', (server) => {
  it('takes ?sslmode=require as libpq does: encrypted, the certificate not verified', async () => {
    if (!server().ssl) {
      // No openssl here: the server has no certificate. CI installs it (Debian's openssl).
      expect(process.env.CI).toBeUndefined();
      return;
    }
    const url = `${await server().freshDatabase()}?sslmode=require`;
    const store = await openPgStore({ url, schema: 'tls', clock: new FakeClock() });
    await store.closeAsync();
    const queries = await openPgQueries({ url, schema: 'tls' });
    expect(queries).toBeDefined();
    await queries!.close();
    // Encrypted, as the store's connections are (the same URL, the same driver).
    const client = new pg.Client({ connectionString: libpqUrl(url) });
    await client.connect();
    const { rows } = await client.query<{ ssl: boolean }>(
      'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
    );
    await client.end();
    expect(rows).toEqual([{ ssl: true }]);
    // verify-full still verifies: a self-signed certificate is refused.
    await expect(
      openPgStore({
        url: url.replace('sslmode=require', 'sslmode=verify-full'),
        schema: 'tls',
        clock: new FakeClock(),
      }),
    ).rejects.toMatchObject({ code: 'STORE_OPEN_FAILED' });
  });
});
