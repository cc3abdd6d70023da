import { describe, expect, it } from 'vitest';
import { withStartupOption } from '../../../src/store/pg/with-startup-option.js';

describe('withStartupOption', () => {
  it('passes the option beside a URL that has none', () => {
    expect(withStartupOption('postgres://u@127.0.0.1:5432/db', '-c a=1')).toEqual({
      connectionString: 'postgres://u@127.0.0.1:5432/db',
      options: '-c a=1',
    });
  });

  it('appends it to the options a URL gives (pg would drop a config’s)', () => {
    const got = withStartupOption(
      'postgres://u:p@h/db?options=-c%20b%3D2&sslmode=disable',
      '-c a=1',
    );
    expect(got.options).toBeUndefined();
    const url = new URL(got.connectionString);
    expect(url.searchParams.get('options')).toBe('-c b=2 -c a=1');
    expect(url.searchParams.get('sslmode')).toBe('disable');
    expect(url.password).toBe('p');
  });

  it('leaves a URL the WHATWG parser refuses as it is, the option beside it', () => {
    expect(withStartupOption('not a url', '-c a=1')).toEqual({
      connectionString: 'not a url',
      options: '-c a=1',
    });
  });
});
