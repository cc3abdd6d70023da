import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { LeaseStore } from '../../../src/store/pg/lease-store.js';

describe('LeaseStore arguments', () => {
  // Never connected: the constructor only checks its arguments.
  const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });

  it('refuses a lease period that is not a whole number of milliseconds, at least 30', () => {
    for (const ms of [0, 29, 1.5, Number.NaN]) {
      expect(() => new LeaseStore(pool, 'fleet', ms)).toThrow(
        expect.objectContaining({ code: 'STORE_BAD_ARGUMENT' }),
      );
    }
    expect(new LeaseStore(pool, 'fleet', 30).leaseMs).toBe(30);
  });

  it('refuses a schema name it would have to think about quoting', () => {
    expect(() => new LeaseStore(pool, 'a"; DROP TABLE x; --', 3_000)).toThrow(
      /state\.postgres\.schema must be/,
    );
  });
});
