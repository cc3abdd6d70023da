import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/runtime/config/config-error.js';
import { loadBotConfig } from '../../../src/runtime/config/load-bot-config.js';

const FILE = '/etc/ledgerbot/bot.config.yaml';
const BASE = 'ledger:\n  url: http://127.0.0.1:7575\n  userId: bot\nrules: rules/\n';
const SECRET = 'pg-pw-SECRET';

function load(text: string, env: Record<string, string> = {}) {
  return loadBotConfig({ path: FILE, text, env });
}

function errorOf(text: string, env: Record<string, string> = {}): ConfigError {
  try {
    load(text, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('state.postgres', () => {
  it('reads the URL from the environment, with the default schema and pool size', () => {
    const url = `postgres://bot:${SECRET}@db.example.com:5432/ledger`;
    const config = load(`${BASE}state:\n  postgres:\n    url: \${LEDGERBOT_PG_URL}\n`, {
      LEDGERBOT_PG_URL: url,
    });
    expect(config.state).toEqual({
      dir: '/etc/ledgerbot/.state',
      retentionMs: 7 * 86_400_000,
      postgres: { url, schema: 'ledgerbot', poolSize: 4 },
    });
  });

  it('reads a schema and a pool size', () => {
    const config = load(
      `${BASE}state:\n  dir: st\n  postgres: { url: 'postgres://h/db', schema: bot_a, poolSize: 8 }\n`,
    );
    expect(config.state.postgres).toEqual({ url: 'postgres://h/db', schema: 'bot_a', poolSize: 8 });
    expect(config.state.dir).toBe('/etc/ledgerbot/st');
  });

  it('has no postgres without the key (the SQLite journal in state.dir)', () => {
    expect(load(BASE).state.postgres).toBeUndefined();
  });

  it.each([
    ['a missing url', '  postgres: { schema: x }\n', /state\.postgres.*url/],
    [
      'a schema name with upper case',
      "  postgres: { url: 'postgres://h/db', schema: Bot }\n",
      /state\.postgres\.schema/,
    ],
    [
      'a schema name starting pg_',
      "  postgres: { url: 'postgres://h/db', schema: pg_bot }\n",
      /state\.postgres\.schema/,
    ],
    [
      'a quote in the schema name',
      "  postgres: { url: 'postgres://h/db', schema: 'a\"b' }\n",
      /state\.postgres\.schema/,
    ],
    [
      'a pool of one connection',
      "  postgres: { url: 'postgres://h/db', poolSize: 1 }\n",
      /state\.postgres\.poolSize/,
    ],
    ['an unknown key', "  postgres: { url: 'postgres://h/db', user: x }\n", /user/],
  ])('refuses %s, naming the field at its line', (_what, yaml, message) => {
    const err = errorOf(`${BASE}state:\n${yaml}`);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(`${FILE}:6:`);
  });

  it('never shows the URL in an error, written or from the environment', () => {
    const written = errorOf(`${BASE}state:\n  postgres:\n    url: [postgres://u:${SECRET}@h/db]\n`);
    expect(written.message).toContain('state.postgres.url');
    expect(written.message).not.toContain(SECRET);
    const fromEnv = errorOf(`${BASE}state:\n  postgres:\n    url: \${U}\n    poolSize: 0\n`, {
      U: `postgres://u:${SECRET}@h/db`,
    });
    expect(fromEnv.message).not.toContain(SECRET);
  });
});
