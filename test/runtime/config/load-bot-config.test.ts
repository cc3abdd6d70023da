import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBotConfig } from '../../../src/runtime/config/load-bot-config.js';
import { ConfigError } from '../../../src/runtime/config/config-error.js';

const FILE = '/etc/ledgerbot/bot.config.yaml';
const BASE = 'ledger:\n  url: http://127.0.0.1:7575\n  userId: bot\nrules: rules/\n';

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

describe('defaults and conversion', () => {
  it('fills in every default, converts durations and resolves paths against the file', () => {
    const config = load(BASE);
    expect(config).toEqual({
      file: FILE,
      ledger: {
        endpoint: { kind: 'url', url: 'http://127.0.0.1:7575' },
        userId: 'bot',
        auth: { type: 'none' },
        apiVersion: '3.5',
        packages: [],
        pingIntervalMs: 25_000,
      },
      parties: {},
      rules: ['/etc/ledgerbot/rules'],
      tests: ['/etc/ledgerbot/tests'],
      state: { dir: '/etc/ledgerbot/.state', retentionMs: 7 * 86_400_000 },
      start: { kind: 'checkpoint' },
      submission: {
        maxInFlight: 32,
        completionTimeoutMs: 30_000,
        retry: {
          maxAttempts: 10,
          initialDelayMs: 1_000,
          maxDelayMs: 60_000,
          deadlineMs: 3_600_000,
        },
        dedup: { mode: 'offset', fallbackMs: 86_400_000 },
      },
      log: { level: 'info' },
    });
  });

  it('refuses hostile nesting before the YAML parser sees it, at its line and column', () => {
    const deep = `${BASE}parties: ${'['.repeat(100_000)}\n`;
    const err = errorOf(deep);
    expect(err.problems[0]).toMatchObject({ code: 'YAML_TOO_COMPLEX', line: 5 });
    expect(err.message).toMatch(
      new RegExp(`^${FILE}:5:\\d+: .*: config files do not nest that deep$`),
    );
    const indented = `${BASE}state:\n${' '.repeat(300)}dir: x\n`;
    expect(errorOf(indented).problems[0]).toMatchObject({ code: 'YAML_TOO_COMPLEX', line: 6 });
    const huge = `${BASE}# ${'x'.repeat(1024 * 1024)}\n`;
    expect(errorOf(huge).message).toMatch(
      new RegExp(`^${FILE}:1:1: the file is .*, more than the .* a config file may have`),
    );
  });

  it('refuses an alias bomb before expanding it', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (const [n, prev] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'd'],
    ] as const) {
      bomb.push(`${n}: &${n} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    }
    const err = errorOf(`${BASE}parties:\n${bomb.map((l) => `  ${l}`).join('\n')}\n`);
    expect(err.problems[0]).toMatchObject({ code: 'YAML_TOO_COMPLEX', line: 1, col: 1 });
    expect(err.message).toMatch(/too many aliases/);
  });

  it('reads every field', () => {
    const config = load(
      [
        'ledger:',
        '  url: https://participant.example.com/',
        '  userId: bot',
        '  apiVersion: 3.4',
        '  pingInterval: 20s',
        '  auth: {type: file, path: secrets/token}',
        '  tls: {caFile: ca.pem, certFile: /abs/client.pem, keyFile: client.key}',
        'parties: {payer: "Payer::1220bb"}',
        'rules: [a.yaml, more/]',
        'tests: t',
        'state: {dir: /var/lib/ledgerbot, retention: 2d12h}',
        'start: 1200',
        'submission:',
        '  maxInFlight: 4',
        '  completionTimeout: 1m30s',
        '  retry: {maxAttempts: 3, initialDelay: 250ms, maxDelay: 10s, deadline: 2h}',
        '  dedup: {mode: duration, value: 7d}',
        'http: {port: 9464}',
        'log: {level: debug, pretty: true}',
      ].join('\n'),
    );
    expect(config.ledger).toEqual({
      endpoint: { kind: 'url', url: 'https://participant.example.com' },
      userId: 'bot',
      apiVersion: '3.4',
      packages: [],
      pingIntervalMs: 20_000,
      auth: { type: 'file', path: '/etc/ledgerbot/secrets/token' },
      tls: {
        caFile: '/etc/ledgerbot/ca.pem',
        certFile: '/abs/client.pem',
        keyFile: '/etc/ledgerbot/client.key',
      },
    });
    expect(config.parties).toEqual({ payer: 'Payer::1220bb' });
    expect(config.rules).toEqual(['/etc/ledgerbot/a.yaml', '/etc/ledgerbot/more']);
    expect(config.tests).toEqual(['/etc/ledgerbot/t']);
    expect(config.state).toEqual({ dir: '/var/lib/ledgerbot', retentionMs: 60 * 3600_000 });
    expect(config.start).toEqual({ kind: 'offset', offset: 1200 });
    expect(config.submission).toEqual({
      maxInFlight: 4,
      completionTimeoutMs: 90_000,
      retry: { maxAttempts: 3, initialDelayMs: 250, maxDelayMs: 10_000, deadlineMs: 7_200_000 },
      dedup: { mode: 'duration', valueMs: 604_800_000 },
    });
    expect(config.http).toEqual({
      port: 9464,
      host: '127.0.0.1',
      readyMaxLag: 1000,
      readOnly: false,
      allowedHosts: [],
    });
    expect(config.log).toEqual({ level: 'debug', pretty: true });
  });

  it('reads ledger.pingInterval as ms; 0s turns the websocket pings off', () => {
    const at = (v: string) =>
      load(`ledger:\n  url: http://x\n  userId: bot\n  pingInterval: ${v}\nrules: r\n`).ledger
        .pingIntervalMs;
    expect(at('0s')).toBe(0);
    expect(at('500ms')).toBe(500);
    expect(
      errorOf(`ledger:\n  url: http://x\n  userId: bot\n  pingInterval: 25\nrules: r\n`).message,
    ).toMatch(/`ledger\.pingInterval`: .*is not a duration/);
  });

  it.each([
    ['checkpoint', { kind: 'checkpoint' }],
    ['ledger-end', { kind: 'ledger-end' }],
    ['begin', { kind: 'begin' }],
    ['0', { kind: 'offset', offset: 0 }],
    ['"77"', { kind: 'offset', offset: 77 }],
  ])('reads start: %s', (value, expected) => {
    expect(load(`${BASE}start: ${value}\n`).start).toEqual(expected);
  });

  it('reads embedded mode with model paths and aliases to allocate', () => {
    const config = load(
      'ledger:\n  embedded:\n    models: [model.yaml]\n    parties: [issuer, payer]\n  userId: bot\n' +
        'parties: {bank: "Bank::1220cc"}\nrules: rules/\n',
    );
    expect(config.ledger.endpoint).toEqual({
      kind: 'embedded',
      models: ['/etc/ledgerbot/model.yaml'],
      parties: ['issuer', 'payer'],
    });
    expect(config.parties).toEqual({ bank: 'Bank::1220cc' });
  });

  it('reads ledger.packages as absolute paths, each with where the file names it', () => {
    const config = load(
      'ledger:\n  url: http://x\n  userId: bot\n  packages:\n    - dars/main.dar\n' +
        '    - /opt/daml/dars\nrules: r\n',
    );
    expect(config.ledger.packages).toEqual([
      { path: '/etc/ledgerbot/dars/main.dar', at: `${FILE}:5:7` },
      { path: '/opt/daml/dars', at: `${FILE}:6:7` },
    ]);
    const embedded = load(
      'ledger:\n  embedded: {models: [m.yaml]}\n  packages: [a.dalf]\n  userId: bot\nrules: r\n',
    );
    expect(embedded.ledger.packages).toEqual([
      { path: '/etc/ledgerbot/a.dalf', at: `${FILE}:3:14` },
    ]);
  });

  it('resolves a relative config path against the working directory', () => {
    const config = loadBotConfig({ path: 'conf/bot.config.yaml', text: BASE });
    expect(config.file).toBe(resolve('conf/bot.config.yaml'));
    expect(config.rules).toEqual([resolve('conf/rules')]);
  });

  it('returns a deeply frozen config', () => {
    const config = load(`${BASE}parties: {payer: "P::1"}\n`);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.submission.retry)).toBe(true);
    expect(Object.isFrozen(config.parties)).toBe(true);
    expect(Object.isFrozen(config.rules)).toBe(true);
  });
});

describe('environment interpolation', () => {
  it('replaces ${VAR} and ${VAR:-default} in values, and $${ is a literal ${', () => {
    const config = load(
      'ledger:\n  url: http://${HOST}:${PORT:-7575}\n  userId: ${USER_ID:-ledgerbot}\n' +
        '  auth: {type: static, token: "${TOKEN}"}\n' +
        'parties: {payer: "Payer::${PAYER_NS}", lit: "a$${b}$c"}\nrules: rules/\nhttp: {port: "${HTTP_PORT}"}\n',
      { HOST: 'ledger.internal', TOKEN: 'tok', PAYER_NS: '1220bb', HTTP_PORT: '9464', USER_ID: '' },
    );
    expect(config.ledger.endpoint).toEqual({ kind: 'url', url: 'http://ledger.internal:7575' });
    expect(config.ledger.userId).toBe('ledgerbot');
    expect(config.ledger.auth).toEqual({ type: 'static', token: 'tok' });
    expect(config.parties).toEqual({ payer: 'Payer::1220bb', lit: 'a${b}$c' });
    expect(config.http?.port).toBe(9464);
  });

  it('reads http.token from the environment and http.readyMaxLag, and hides the token in errors', () => {
    const config = load(
      BASE +
        'http: {port: 0, token: "${OPS_TOKEN}", readyMaxLag: 5, readOnly: true, allowedHosts: [bot.example.com]}\n',
      { OPS_TOKEN: 'ops-s3cret' },
    );
    expect(config.http).toEqual({
      port: 0,
      host: '127.0.0.1',
      token: 'ops-s3cret',
      readyMaxLag: 5,
      readOnly: true,
      allowedHosts: ['bot.example.com'],
    });
    const err = errorOf(BASE + 'http: {port: 0, token: 12, readyMaxLag: -1}\n');
    expect(err.problems.map((p) => p.path)).toContain('http.readyMaxLag');
    expect(errorOf(BASE + 'http: {port: 0, token: ""}\n').message).not.toContain('ops-s3cret');
  });

  it('keeps a value with YAML syntax a plain string: no structure can be injected', () => {
    const token = 'x\nrules: /etc\n  - type: none}\n{"a": [1';
    const config = load(
      'ledger:\n  url: http://x\n  userId: bot\n  auth:\n    type: static\n    token: ${TOKEN}\nrules: rules/\n',
      { TOKEN: token },
    );
    expect(config.ledger.auth).toEqual({ type: 'static', token });
    expect(config.rules).toEqual(['/etc/ledgerbot/rules']);
  });

  it('does not interpolate keys', () => {
    const e = errorOf(`${BASE}\${KEY}: 1\n`, { KEY: 'log' });
    expect(e.message).toBe(
      `${FILE}:5:1: unknown key "\${KEY}" in the top level\n    hint: allowed here: ledger, parties, rules, tests, state, start, submission, fleet, http, log`,
    );
  });

  it('names a missing variable at its file:line:col', () => {
    const e = errorOf(`${BASE}parties:\n  payer: "Payer::\${PAYER_ID}"\n`);
    expect(e.message).toBe(
      `${FILE}:6:18: environment variable PAYER_ID is not set\n    hint: set PAYER_ID, or give a default: \${PAYER_ID:-value}`,
    );
    expect(e).toMatchObject({ code: 'INVALID_CONFIG', file: FILE, line: 6, col: 18 });
    expect(e.problems[0]).toMatchObject({ code: 'MISSING_ENV', path: 'parties.payer' });
  });

  it('reports bad ${...} syntax', () => {
    expect(errorOf(`${BASE}state:\n  dir: \${1X}\n`).message).toBe(
      `${FILE}:6:8: "1X" is not an environment variable name\n    hint: names are letters, digits and _, not starting with a digit: \${NAME} or \${NAME:-default}`,
    );
    expect(errorOf(`${BASE}state:\n  dir: abc\${X\n`).message).toBe(
      `${FILE}:6:11: \`\${\` is never closed\n    hint: write \${NAME} or \${NAME:-default}; for a literal \${ write $\${`,
    );
  });

  it('never echoes an interpolated value or a secret field in errors', () => {
    const secret = 'hunter2-SECRET';
    const cases: [string, Record<string, string>][] = [
      [`${BASE}http:\n  port: \${PORT}\n`, { PORT: secret }],
      [`${BASE}log:\n  level: \${LEVEL}\n`, { LEVEL: secret }],
      [`${BASE}start: \${START}\n`, { START: secret }],
      [`${BASE}submission:\n  completionTimeout: \${T}\n`, { T: secret }],
      ['ledger:\n  url: ${URL}\n  userId: bot\nrules: r\n', { URL: `https://u:${secret}@h` }],
      ['ledger:\n  url: ${URL}\n  userId: bot\nrules: r\n', { URL: secret }],
      [
        'ledger:\n  url: http://x\n  userId: bot\n  auth:\n    type: static\n    token: [hunter2-SECRET]\nrules: r\n',
        {},
      ],
      [
        'ledger:\n  url: http://x\n  userId: bot\n  auth:\n    type: oauth2\n    tokenUrl: ${TU}\n    clientId: c\n    clientSecret: s\nrules: r\n',
        { TU: secret },
      ],
    ];
    for (const [text, env] of cases) {
      const e = errorOf(text, env);
      expect(e.message).not.toContain(secret);
      expect(e.message).not.toContain('hunter2');
      expect(JSON.stringify(e.problems)).not.toContain('hunter2');
    }
    expect(errorOf(cases[0]![0], cases[0]![1]).message).toBe(
      `${FILE}:6:9: \`http.port\` must be a whole number, not the value from the environment`,
    );
    expect(errorOf(cases[6]![0], cases[6]![1]).message).toBe(
      `${FILE}:6:12: \`ledger.auth.token\` must be text, not the (secret) value`,
    );
  });

  it('redacts the credentials of a URL written in the file that it refuses for them', () => {
    const e = errorOf(
      'ledger:\n  url: http://admin:URLPASSWORD99@127.0.0.1:17575/?apikey=QUERYSECRET77\n  userId: bot\nrules: r\n',
    );
    expect(e.message).toBe(
      `${FILE}:2:8: \`ledger.url\`: "http://redacted:redacted@127.0.0.1:17575/?apikey=redacted" must not carry credentials; put them in \`ledger.auth\`\n    hint: write the JSON Ledger API address, e.g. http://127.0.0.1:7575 or https://participant.example.com`,
    );
    const notHttp = errorOf(
      'ledger:\n  url: ftp://admin:URLPASSWORD99@host\n  userId: bot\nrules: r\n',
    );
    expect(notHttp.message).toContain('"ftp://[redacted]@host" must start with http://');
    const oauth = errorOf(
      'ledger:\n  url: http://x\n  userId: bot\n  auth:\n    type: oauth2\n    tokenUrl: https://id:TOKENPASS55@idp/token\n    clientId: c\n    clientSecret: s\nrules: r\n',
    );
    expect(oauth.message).toContain('"https://redacted:redacted@idp/token" must not carry');
    for (const err of [e, notHttp, oauth]) {
      expect(JSON.stringify(err.problems) + err.message).not.toMatch(/PASSWORD99|SECRET77|PASS55/);
    }
  });

  it('refuses a state.postgres.url that is not a PostgreSQL URL, quoting only its scheme', () => {
    const e = errorOf(`${BASE}state:\n  postgres: { url: 'http://lb:PGPASS42@db:5432/lb' }\n`);
    expect(e.message).toBe(
      `${FILE}:6:20: \`state.postgres.url\` must start with postgres:// or postgresql://, not http://\n    hint: write the database URL, e.g. postgres://user:password@host:5432/database (from the environment: \${LEDGERBOT_PG_URL})`,
    );
    expect(JSON.stringify(e.problems)).not.toContain('PGPASS42');
    for (const url of ['postgres://lb@db/lb', 'postgresql://lb@db/lb', 'POSTGRES://lb@db/lb']) {
      expect(load(`${BASE}state:\n  postgres: { url: '${url}' }\n`).state.postgres?.url).toBe(url);
    }
  });

  it('shows no source line of a YAML syntax error (it could hold a secret)', () => {
    const e = errorOf('ledger:\n  auth: {token: hunter2-SECRET: x}\n');
    expect(e.message).not.toContain('hunter2');
    expect(e.problems[0]).toMatchObject({ code: 'YAML_SYNTAX', line: 2 });
  });
});

describe('errors, each at file:line:col', () => {
  it.each([
    [
      'an unknown top-level key, with a hint',
      `${BASE}sumbission:\n  maxInFlight: 3\n`,
      `${FILE}:5:1: unknown key "sumbission" in the top level\n    hint: did you mean "submission"?`,
    ],
    [
      'an unknown nested key, with a hint',
      `${BASE}submission:\n  maxInFligt: 3\n`,
      `${FILE}:6:3: unknown key "maxInFligt" in \`submission\`\n    hint: did you mean "maxInFlight"?`,
    ],
    [
      'an unknown key nothing resembles, listing what is allowed',
      `${BASE}log:\n  colour: true\n`,
      `${FILE}:6:3: unknown key "colour" in \`log\`\n    hint: allowed here: level, pretty`,
    ],
    [
      'a wrong type',
      `${BASE}http:\n  port: abc\n`,
      `${FILE}:6:9: \`http.port\` must be a whole number, not "abc"`,
    ],
    [
      'http.readOnly that is not true or false',
      `${BASE}http:\n  port: 9464\n  readOnly: yes please\n`,
      `${FILE}:7:13: \`http.readOnly\` must be true or false, not "yes please"`,
    ],
    [
      'http.allowedHosts with a port or a scheme',
      `${BASE}http:\n  port: 9464\n  allowedHosts: [console.example.com, 'http://x:80']\n`,
      `${FILE}:7:39: \`http.allowedHosts[1]\`: "http://x:80" is not a host name\n    hint: write the name alone, as the Host header names it without its port, e.g. console.example.com`,
    ],
    [
      'a wrong type for a section',
      `${BASE}submission: 5\n`,
      `${FILE}:5:13: \`submission\` must be a mapping (key: value lines), not 5`,
    ],
    [
      'ledger.packages that is not a list',
      'ledger:\n  url: http://x\n  userId: bot\n  packages: main.dar\nrules: r\n',
      `${FILE}:4:13: \`ledger.packages\` must be a list, not "main.dar"`,
    ],
    [
      'an empty ledger.packages entry',
      'ledger:\n  url: http://x\n  userId: bot\n  packages: [a.dar, ""]\nrules: r\n',
      `${FILE}:4:21: \`ledger.packages[1]\` is empty`,
    ],
    [
      'a sandbox model in ledger.packages',
      'ledger:\n  url: http://x\n  userId: bot\n  packages: [model.yaml]\nrules: r\n',
      `${FILE}:4:14: \`ledger.packages\` names model.yaml, a .yaml file: packages are DAR (.dar) or DALF (.dalf) files, or directories of them\n    hint: a sandbox model goes in \`ledger.embedded.models\`, or in \`--model\` for validate and test`,
    ],
    [
      'a number out of range',
      `${BASE}http:\n  port: 70000\n`,
      `${FILE}:6:9: \`http.port\` must be at most 65535, not 70000`,
    ],
    [
      'maxInFlight below 1',
      `${BASE}submission:\n  maxInFlight: 0\n`,
      `${FILE}:6:16: \`submission.maxInFlight\` must be at least 1, not 0`,
    ],
    [
      'a bad duration',
      `${BASE}submission:\n  completionTimeout: 30 seconds\n`,
      `${FILE}:6:22: \`submission.completionTimeout\`: "30 seconds" is not a duration\n    hint: write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m`,
    ],
    [
      'a retention that is not a duration',
      `${BASE}state:\n  retention: forever\n`,
      `${FILE}:6:14: \`state.retention\`: "forever" is not a duration\n    hint: write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m`,
    ],
    [
      'a bad duration deep down',
      `${BASE}submission:\n  retry:\n    deadline: 1 hour\n`,
      `${FILE}:7:15: \`submission.retry.deadline\`: "1 hour" is not a duration\n    hint: write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m`,
    ],
    [
      'a url with another scheme',
      'ledger:\n  url: ftp://x\n  userId: bot\nrules: rules/\n',
      `${FILE}:2:8: \`ledger.url\`: "ftp://x" must start with http:// or https://\n    hint: write the JSON Ledger API address, e.g. http://127.0.0.1:7575 or https://participant.example.com`,
    ],
    [
      'a url that is not one',
      'ledger:\n  url: not a url\n  userId: bot\nrules: rules/\n',
      `${FILE}:2:8: \`ledger.url\`: "not a url" is not a URL\n    hint: write the JSON Ledger API address, e.g. http://127.0.0.1:7575 or https://participant.example.com`,
    ],
    [
      'both url and embedded',
      'ledger:\n  url: http://x\n  embedded:\n    models: [m.yaml]\n  userId: bot\nrules: rules/\n',
      `${FILE}:3:3: \`ledger\` has both \`url\` and \`embedded\`\n    hint: keep \`url\` to connect to a participant, or \`embedded\` to start the sandbox in-process`,
    ],
    [
      'neither url nor embedded',
      'ledger:\n  userId: bot\nrules: rules/\n',
      `${FILE}:1:1: \`ledger\` has neither \`url\` nor \`embedded\`\n    hint: add \`url: http://host:port\` (the JSON Ledger API) or \`embedded: {models: [...]}\``,
    ],
    [
      'embedded without models',
      'ledger:\n  embedded:\n    parties: [a]\n  userId: bot\nrules: rules/\n',
      `${FILE}:2:3: \`ledger.embedded\` has no \`models\`\n    hint: add \`models:\` with the model files to load, e.g. [model.yaml]`,
    ],
    [
      'an alias both allocated and fixed',
      'ledger:\n  embedded:\n    models: [m.yaml]\n    parties: [payer]\n  userId: bot\nparties: {payer: "P::1"}\nrules: rules/\n',
      `${FILE}:4:15: party alias "payer" is both allocated (ledger.embedded.parties) and fixed (parties)\n    hint: an alias is either allocated by the embedded sandbox or mapped to an existing party id, not both`,
    ],
    [
      'a missing userId',
      'ledger:\n  url: http://x\nrules: r\n',
      `${FILE}:1:1: \`ledger\` has no \`userId\`\n    hint: add \`userId:\` with the Ledger API user the bot submits as`,
    ],
    [
      'missing rules',
      'ledger:\n  url: http://x\n  userId: bot\n',
      `${FILE}:1:1: the file has no \`rules\`\n    hint: add \`rules: rules/\` (a directory of rule files) or a list of paths`,
    ],
    [
      'rules of the wrong type',
      'ledger:\n  url: http://x\n  userId: bot\nrules: {dir: x}\n',
      `${FILE}:4:8: \`rules\` must be a path (text) or a list of paths, not a mapping`,
    ],
    [
      'a bad start keyword',
      `${BASE}start: ledger_end\n`,
      `${FILE}:5:8: \`start\` must be checkpoint, ledger-end, begin or an offset, not "ledger_end"\n    hint: did you mean "ledger-end"?`,
    ],
    [
      'a negative start offset',
      `${BASE}start: -4\n`,
      `${FILE}:5:8: \`start\` must be checkpoint, ledger-end, begin or an offset, not -4\n    hint: an offset is a whole number of at least 0, e.g. start: 1200`,
    ],
    [
      'a bad dedup mode',
      `${BASE}submission:\n  dedup:\n    mode: offst\n`,
      `${FILE}:7:11: \`submission.dedup.mode\` must be one of offset, duration, not "offst"\n    hint: did you mean "offset"?`,
    ],
    [
      'dedup duration without a value',
      `${BASE}submission:\n  dedup:\n    mode: duration\n`,
      `${FILE}:6:3: \`submission.dedup\` has no \`value\`\n    hint: add \`value:\` with a duration, e.g. 24h`,
    ],
    [
      'a value where offset mode takes none',
      `${BASE}submission:\n  dedup: {mode: offset, value: 5m}\n`,
      `${FILE}:6:25: unknown key "value" in \`submission.dedup\`\n    hint: allowed here: mode, fallback`,
    ],
    [
      'a bad auth type',
      'ledger:\n  url: http://x\n  userId: bot\n  auth:\n    type: oauth\nrules: r\n',
      `${FILE}:5:11: \`ledger.auth.type\` must be one of none, static, file, oauth2, not "oauth"\n    hint: did you mean "oauth2"?`,
    ],
    [
      'oauth2 without a client secret',
      'ledger:\n  url: http://x\n  userId: bot\n  auth: {type: oauth2, tokenUrl: "https://idp/t", clientId: c}\nrules: r\n',
      `${FILE}:4:3: \`ledger.auth\` has no \`clientSecret\``,
    ],
    [
      'a bad api version',
      'ledger:\n  url: http://x\n  userId: bot\n  apiVersion: 3.6\nrules: r\n',
      `${FILE}:4:15: \`ledger.apiVersion\` must be one of 3.4, 3.5, not "3.6"`,
    ],
    [
      'a bad log level',
      `${BASE}log:\n  level: inf\n`,
      `${FILE}:6:10: \`log.level\` must be one of trace, debug, info, warn, error, fatal, silent, not "inf"\n    hint: did you mean "info"?`,
    ],
    [
      'a bad party alias',
      `${BASE}parties:\n  "bad alias": X::1\n`,
      `${FILE}:6:3: "bad alias" is not a party alias\n    hint: aliases are letters, digits, - and _, starting with a letter`,
    ],
    [
      'a client certificate without its key',
      'ledger:\n  url: https://x\n  userId: bot\n  tls: {certFile: c.pem}\nrules: r\n',
      `${FILE}:4:8: \`ledger.tls\` needs both \`certFile\` and \`keyFile\` for a client certificate, or neither`,
    ],
    ['an empty file', '', `${FILE}:1:1: the file is empty`],
    [
      'a duplicate key',
      `${BASE}log: {level: info}\nlog: {level: debug}\n`,
      `${FILE}:6:1: YAML syntax: Map keys must be unique\n    hint: each key may appear once per mapping; remove or rename the repeated one`,
    ],
  ])('%s', (_name, text, message) => {
    expect(errorOf(text).message).toBe(message);
  });

  it('reports every problem at once, the first one as the error position', () => {
    const e = errorOf(
      'ledger:\n  url: http://x\n  userId: bot\n  auth:\n    type: static\n    tokn: abc\nrules: r\n',
    );
    expect(e.message).toBe(
      [
        `2 problems in ${FILE}; fix them and start again:`,
        `${FILE}:4:3: \`ledger.auth\` has no \`token\``,
        `${FILE}:6:5: unknown key "tokn" in \`ledger.auth\``,
        '    hint: did you mean "token"?',
      ].join('\n'),
    );
    expect(e).toMatchObject({ line: 4, col: 3 });
    expect(e.problems.map((p) => p.code)).toEqual(['MISSING_KEY', 'UNKNOWN_KEY']);
  });

  it('caps submission.retry.maxAttempts as a rule retry is capped (it is the rules default)', () => {
    const e = errorOf(`${BASE}submission:\n  retry:\n    maxAttempts: 5000\n`);
    expect(e).toMatchObject({ line: 7, col: 18 });
    expect(e.message).toContain('1000');
    expect(
      load(`${BASE}submission:\n  retry:\n    maxAttempts: 1000\n`).submission.retry.maxAttempts,
    ).toBe(1000);
  });
});

describe('shipped configs', () => {
  const root = resolve(import.meta.dirname, '../../..');

  it('the root bot.config.yaml validates', () => {
    const path = join(root, 'bot.config.yaml');
    const config = loadBotConfig({ path, text: readFileSync(path, 'utf8'), env: {} });
    expect(config.ledger.endpoint).toEqual({ kind: 'url', url: 'http://127.0.0.1:7575' });
    expect(config.rules).toEqual([join(root, 'rules')]);
  });

  it('examples/invoices/bot.config.yaml validates in embedded mode', () => {
    const path = join(root, 'examples/invoices/bot.config.yaml');
    const config = loadBotConfig({ path, text: readFileSync(path, 'utf8'), env: {} });
    expect(config.ledger.endpoint).toEqual({
      kind: 'embedded',
      models: [join(dirname(path), 'model.yaml')],
      parties: ['issuer', 'payer'],
    });
    expect(config.rules).toEqual([join(dirname(path), 'rules')]);
  });
});
