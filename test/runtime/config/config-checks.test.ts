import { LineCounter, parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { YamlLocator } from '../../../src/core/yaml-locator.js';
import {
  checkLedgerEndpoint,
  urlProblem,
} from '../../../src/runtime/config/check-ledger-endpoint.js';
import { compileBotConfig } from '../../../src/runtime/config/compile-bot-config.js';
import type { ConfigError } from '../../../src/runtime/config/config-error.js';
import {
  ConfigProblemList,
  type ConfigCheckContext,
} from '../../../src/runtime/config/config-problem-list.js';
import type { RawBotConfig } from '../../../src/runtime/config/raw-bot-config.js';
import { resolveStartPosition } from '../../../src/runtime/config/resolve-start-position.js';
import { checkPackagePaths } from '../../../src/runtime/config/check-package-paths.js';

const FILE = '/srv/bot/bot.config.yaml';

function context(text: string): ConfigCheckContext & { problems: ConfigProblemList } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  return {
    at: new YamlLocator(FILE, text, doc, lines),
    problems: new ConfigProblemList(FILE),
    describe: (_path, value) => JSON.stringify(value),
  };
}

function problemsOf(ctx: { problems: ConfigProblemList }): ConfigError['problems'] {
  try {
    ctx.problems.throwIfAny();
  } catch (error) {
    return (error as ConfigError).problems;
  }
  return [];
}

function raw(ledger: Partial<RawBotConfig['ledger']>, parties = {}): RawBotConfig {
  return {
    ledger: {
      userId: 'bot',
      auth: { type: 'none' },
      apiVersion: '3.5',
      pingInterval: '25s',
      packages: [],
      ...ledger,
    },
    parties,
    rules: 'rules/',
    state: { dir: '.state', retention: '7d' },
    start: 'checkpoint',
    submission: {
      maxInFlight: 32,
      completionTimeout: '30s',
      retry: { maxAttempts: 10, initialDelay: '1s', maxDelay: '1m', deadline: '1h' },
      dedup: { mode: 'offset' },
    },
    log: { level: 'info' },
  };
}

describe('urlProblem', () => {
  it('accepts http and https, refuses other schemes, credentials and non-URLs', () => {
    expect(urlProblem('https://p.example.com/')).toBeUndefined();
    expect(urlProblem('http://127.0.0.1:7575')).toBeUndefined();
    expect(urlProblem('ftp://x')).toBe('must start with http:// or https://');
    expect(urlProblem('http://u:p@x')).toMatch(/must not carry credentials/);
    expect(urlProblem('127.0.0.1:7575')).toMatch(/not a URL|must start/);
    expect(urlProblem('no url')).toBe('is not a URL');
  });
});

describe('checkLedgerEndpoint', () => {
  it('strips trailing slashes of a url', () => {
    const ctx = context('ledger:\n  url: http://x/\n');
    expect(checkLedgerEndpoint(raw({ url: 'http://x//' }), ctx)).toEqual({
      kind: 'url',
      url: 'http://x',
    });
    expect(problemsOf(ctx)).toEqual([]);
  });

  it('wants exactly one of url and embedded', () => {
    const both = context('ledger:\n  url: http://x\n  embedded: {models: [m.yaml]}\n');
    const r = raw({ url: 'http://x', embedded: { models: ['m.yaml'], parties: [] } });
    expect(checkLedgerEndpoint(r, both)).toBeUndefined();
    expect(problemsOf(both)).toMatchObject([{ code: 'LEDGER_ENDPOINT', line: 3, col: 3 }]);
    const neither = context('ledger:\n  userId: bot\n');
    expect(checkLedgerEndpoint(raw({}), neither)).toBeUndefined();
    expect(problemsOf(neither)).toMatchObject([{ code: 'LEDGER_ENDPOINT' }]);
  });

  it('reports an alias both allocated and fixed, and a lone TLS certFile, all at once', () => {
    const text =
      'ledger:\n  embedded:\n    models: [m.yaml]\n    parties: [alice, bob]\n  tls: {certFile: c.pem}\n';
    const ctx = context(text);
    const endpoint = checkLedgerEndpoint(
      raw(
        { embedded: { models: ['m.yaml'], parties: ['alice', 'bob'] }, tls: { certFile: 'c.pem' } },
        { bob: 'Bob::1220' },
      ),
      ctx,
    );
    expect(endpoint).toEqual({ kind: 'embedded', models: ['m.yaml'], parties: ['alice', 'bob'] });
    expect(problemsOf(ctx)).toMatchObject([
      { code: 'DUPLICATE_ALIAS', path: 'ledger.embedded.parties[1]', line: 4, col: 22 },
      { code: 'MISSING_KEY', path: 'ledger.tls', line: 5 },
    ]);
  });
});

describe('resolveStartPosition', () => {
  it('reads keywords and offsets (also as text)', () => {
    const ctx = context('start: x\n');
    expect(resolveStartPosition('begin', ctx)).toEqual({ kind: 'begin' });
    expect(resolveStartPosition(12, ctx)).toEqual({ kind: 'offset', offset: 12 });
    expect(resolveStartPosition('0', ctx)).toEqual({ kind: 'offset', offset: 0 });
    expect(problemsOf(ctx)).toEqual([]);
  });

  it('suggests the closest keyword', () => {
    const ctx = context('start: ledger-nd\n');
    expect(resolveStartPosition('ledger-nd', ctx)).toBeUndefined();
    expect(problemsOf(ctx)).toMatchObject([
      { code: 'BAD_START', line: 1, col: 8, hint: 'did you mean "ledger-end"?' },
    ]);
    const negative = context('start: -1\n');
    expect(resolveStartPosition(-1, negative)).toBeUndefined();
    expect(problemsOf(negative)[0]?.hint).toMatch(/whole number of at least 0/);
  });
});

describe('checkPackagePaths', () => {
  const text = [
    'ledger:',
    '  packages:',
    '    - dars/main.dar',
    '    - model.yaml',
    '    - dars/main.dar',
    '    - src/Main.daml',
    '    - dars/',
    '',
  ].join('\n');
  const packages = ['dars/main.dar', 'model.yaml', 'dars/main.dar', 'src/Main.daml', 'dars/'];

  it('returns every entry at its line and column', () => {
    const ctx = context(text);
    expect(checkPackagePaths(raw({ packages }), ctx).map((p) => [p.path, p.line, p.col])).toEqual([
      ['dars/main.dar', 3, 7],
      ['model.yaml', 4, 7],
      ['dars/main.dar', 5, 7],
      ['src/Main.daml', 6, 7],
      ['dars/', 7, 7],
    ]);
  });

  it('refuses a model or source file and an entry listed twice, each at its entry', () => {
    const ctx = context(text);
    checkPackagePaths(raw({ packages }), ctx);
    expect(problemsOf(ctx)).toEqual([
      expect.objectContaining({
        code: 'BAD_PACKAGE_PATH',
        path: 'ledger.packages[1]',
        line: 4,
        col: 7,
        message: expect.stringContaining('names model.yaml, a .yaml file') as unknown,
        hint: expect.stringContaining('ledger.embedded.models') as unknown,
      }),
      expect.objectContaining({
        line: 5,
        col: 7,
        message: '`ledger.packages` lists dars/main.dar twice (also at line 3)',
      }),
      expect.objectContaining({
        line: 6,
        message: expect.stringContaining('a .daml file') as unknown,
        hint: expect.stringContaining('build the Daml project') as unknown,
      }),
    ]);
  });

  it('accepts DARs, DALFs, directories and no entry at all', () => {
    const ctx = context('ledger:\n  packages: [a.dar, b.DALF, dir, other/]\n');
    checkPackagePaths(raw({ packages: ['a.dar', 'b.DALF', 'dir', 'other/'] }), ctx);
    expect(problemsOf(ctx)).toEqual([]);
    const none = context('ledger: {}\n');
    expect(checkPackagePaths(raw({}), none)).toEqual([]);
  });
});

describe('compileBotConfig', () => {
  it('resolves paths against the file, model paths included, and freezes the result', () => {
    const config = compileBotConfig(
      raw({ auth: { type: 'file', path: 'token' }, tls: { caFile: '/ca.pem' } }),
      FILE,
      {
        endpoint: { kind: 'embedded', models: ['models/m.yaml'], parties: [] },
        start: { kind: 'begin' },
        packages: [
          { path: 'dars/a.dar', line: 4, col: 7 },
          { path: '/opt/dars', line: 5, col: 7 },
        ],
      },
    );
    expect(config.ledger.endpoint).toEqual({
      kind: 'embedded',
      models: ['/srv/bot/models/m.yaml'],
      parties: [],
    });
    expect(config.ledger.auth).toEqual({ type: 'file', path: '/srv/bot/token' });
    expect(config.ledger.tls).toEqual({ caFile: '/ca.pem' });
    expect(config.tests).toEqual(['/srv/bot/tests']);
    expect(config.ledger.packages).toEqual([
      { path: '/srv/bot/dars/a.dar', at: `${FILE}:4:7` },
      { path: '/opt/dars', at: `${FILE}:5:7` },
    ]);
    expect(Object.isFrozen(config.ledger.endpoint)).toBe(true);
    expect(Object.isFrozen(config.ledger.packages[0])).toBe(true);
  });
});
