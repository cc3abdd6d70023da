import type PgModule from 'pg';

export type Pg = typeof PgModule;

/**
 * The `pg` driver, loaded when something opens a PostgreSQL connection: a bot on SQLite never
 * loads it (evaluating it was about 4% of a warm start's CPU profile).
 */
export async function loadPg(): Promise<Pg> {
  return (await import('pg')).default;
}

const INT8_OID = 20;

/** int8 (counts, offsets, epoch ms) as a number: every value the journal stores is a safe integer. */
export function pgTypes(pg: Pg): { getTypeParser: Pg['types']['getTypeParser'] } {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
      oid === INT8_OID
        ? (value: string) => Number(value)
        : (pg.types.getTypeParser(oid, format) as unknown)) as Pg['types']['getTypeParser'],
  };
}
