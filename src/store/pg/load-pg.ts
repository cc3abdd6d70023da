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

/**
 * Connection settings that add `extra` to libpq's `options` (settings made at connection start)
 * after those the URL gives: pg takes a URL's `options` over a config's, so a URL that has some
 * gets `extra` appended there. A URL the WHATWG parser refuses is passed as it is.
 */
export function withStartupOption(
  url: string,
  extra: string,
): { readonly connectionString: string; readonly options?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options: extra };
  }
  const given = parsed.searchParams.get('options');
  if (given === null || given.trim() === '') return { connectionString: url, options: extra };
  parsed.searchParams.set('options', `${given} ${extra}`);
  return { connectionString: parsed.toString() };
}
