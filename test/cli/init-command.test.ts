import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { spawnBot } from '../integration/child-bot.js';
import { cli } from '../support/cli-capture.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-init-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

let dirs = 0;
/** A path for a project directory that does not exist yet. */
function newDir(): string {
  return join(tmp, `project-${++dirs}`);
}

/** Every file below `dir`, relative and sorted. */
function filesIn(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? filesIn(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
    )
    .sort();
}

const EMBEDDED_FILES = [
  '.gitignore',
  'bot.config.yaml',
  'models/starter.yaml',
  'rules/approve-small-claims.yaml',
  'schema/bot-config.schema.json',
  'schema/rule-tests.schema.json',
  'schema/rules.schema.json',
  'tests/approve-small-claims.test.yaml',
];

describe('ledgerbot init --embedded', () => {
  it('writes a project that validate and test accept (exit 0), creating the directory', async () => {
    const dir = newDir();
    const init = await cli(['init', dir, '--embedded']);
    expect(init.err).toBe('');
    expect(init.code).toBe(0);
    expect(filesIn(dir)).toEqual(EMBEDDED_FILES);
    for (const f of EMBEDDED_FILES) expect(init.out).toContain(f);
    // Nothing installs ledgerbot there: npx would look it up on the registry.
    expect(init.out).toContain(
      `node ${join(ROOT, 'bin', 'ledgerbot.js')} validate --config bot.config.yaml`,
    );
    expect(init.out).not.toContain('npx');

    const validate = await cli(['validate', '--config', join(dir, 'bot.config.yaml')]);
    // Checked against the starter model too: the embedded config names it.
    expect(validate.err).toBe(
      `note: types from 1 package from the model ${join(dir, 'models', 'starter.yaml')} (starter 1.0.0)\n`,
    );
    expect(validate.out).toBe('1 file(s), 1 rule(s): valid\n');
    expect(validate.code).toBe(0);

    const test = await cli(['test', join(dir, 'tests')]);
    expect(test.out).toContain('3 passed, 0 failed');
    expect(test.code).toBe(0);
  });

  it('comments the config, and puts the schema line on the rule pointing at a file that exists', async () => {
    const dir = newDir();
    expect((await cli(['init', dir, '--embedded'])).code).toBe(0);
    const config = readFileSync(join(dir, 'bot.config.yaml'), 'utf8');
    expect(config).toMatch(
      /^# yaml-language-server: \$schema=schema\/bot-config\.schema\.json\n# ledgerbot configuration/,
    );
    expect(config).toContain('embedded:');
    expect(config).toContain('models: [models/starter.yaml]');
    expect(config).toContain('${LEDGER_TOKEN}'); // how to move to a participant, in a comment
    // Every file with a modeline points at a copy, in the project, of the schema ledgerbot ships,
    // and an editor using it finds nothing wrong in the file.
    for (const [file, schemaName] of [
      ['bot.config.yaml', 'bot-config.schema.json'],
      ['tests/approve-small-claims.test.yaml', 'rule-tests.schema.json'],
    ] as const) {
      const text = readFileSync(join(dir, file), 'utf8');
      const line = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
      expect(line, file).not.toBeNull();
      const schemaText = readFileSync(resolve(dirname(join(dir, file)), line![1]!), 'utf8');
      expect(schemaText).toBe(readFileSync(join(ROOT, 'schema', schemaName), 'utf8'));
      const validate = new Ajv({ allErrors: true, strict: false }).compile(
        JSON.parse(schemaText) as object,
      );
      expect(validate(parse(text)), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }

    const rule = readFileSync(join(dir, 'rules/approve-small-claims.yaml'), 'utf8');
    const modeline = /^# yaml-language-server: \$schema=(\S+)\n/.exec(rule);
    expect(modeline).not.toBeNull();
    const schema = resolve(join(dir, 'rules'), modeline![1]!);
    expect(readFileSync(schema, 'utf8')).toBe(
      readFileSync(join(ROOT, 'schema/rules.schema.json'), 'utf8'),
    );
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toMatch(/^\.state\/$/m);
    expect(config).toMatch(/^ {2}dir: \.state$/m);
  });

  it('writes into the current directory without DIR', async () => {
    const dir = newDir();
    mkdirSync(dir);
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const init = await cli(['init', '--embedded']);
      expect(init.code).toBe(0);
      expect(init.out).toContain('Wrote a ledgerbot project in .:');
      expect(init.out).not.toContain('cd ');
    } finally {
      process.chdir(cwd);
    }
    expect(filesIn(dir)).toEqual(EMBEDDED_FILES);
  });
});

describe('ledgerbot init --url', () => {
  it('writes a participant config that validate accepts with LEDGER_TOKEN set', async () => {
    const dir = newDir();
    const init = await cli([
      'init',
      dir,
      '--url',
      'https://participant.example.com/',
      '--party',
      'approver=Approver::1220abcd',
      '--party',
      'ops=${OPS_PARTY}',
    ]);
    expect(init.err).toBe('');
    expect(init.code).toBe(0);
    expect(init.out).toContain('export LEDGER_TOKEN=...');
    expect(init.out).not.toContain('APPROVER_PARTY');
    expect(filesIn(dir)).toEqual(EMBEDDED_FILES.filter((f) => f !== 'models/starter.yaml'));
    const config = readFileSync(join(dir, 'bot.config.yaml'), 'utf8');
    expect(config).toContain("url: 'https://participant.example.com'");
    expect(config).toContain('token: ${LEDGER_TOKEN}');
    expect(config).toContain("approver: 'Approver::1220abcd'");
    expect(config).toContain("ops: '${OPS_PARTY}'");

    // Whether validate reads the token is the config loader's business; the test sets it.
    vi.stubEnv('LEDGER_TOKEN', 'a-token');
    vi.stubEnv('OPS_PARTY', 'Ops::1220ef');
    // --offline: the participant of the example config does not exist.
    const validate = await cli(['validate', '--config', join(dir, 'bot.config.yaml'), '--offline']);
    expect(validate.out).toBe('1 file(s), 1 rule(s): valid\n');
    expect(validate.code).toBe(0);
    expect((await cli(['test', join(dir, 'tests')])).code).toBe(0);
  });

  it('without --party reads the example alias from APPROVER_PARTY, and says so', async () => {
    const dir = newDir();
    const init = await cli(['init', dir]);
    expect(init.code).toBe(0);
    expect(init.out).toContain('export APPROVER_PARTY=...');
    expect(init.out).toContain('APPROVER_PARTY');
    const config = readFileSync(join(dir, 'bot.config.yaml'), 'utf8');
    expect(config).toContain("url: 'http://127.0.0.1:7575'");
    expect(config).toContain('approver: ${APPROVER_PARTY}');
    vi.stubEnv('LEDGER_TOKEN', 'a-token');
    vi.stubEnv('APPROVER_PARTY', 'Approver::1220abcd');
    expect((await cli(['validate', '--config', join(dir, 'bot.config.yaml')])).code).toBe(0);
  });
});

describe('ledgerbot init on an existing project', () => {
  it('exits 2 naming every file that exists, writes nothing, and overwrites with --force', async () => {
    const dir = newDir();
    expect((await cli(['init', dir, '--embedded'])).code).toBe(0);
    const rule = join(dir, 'rules/approve-small-claims.yaml');
    writeFileSync(rule, '# my own rule\n');

    const again = await cli(['init', dir, '--embedded']);
    expect(again.code).toBe(2);
    for (const f of EMBEDDED_FILES.filter((f) => f !== '.gitignore')) {
      expect(again.err).toContain(f);
    }
    expect(again.err).toContain('--force');
    expect(readFileSync(rule, 'utf8')).toBe('# my own rule\n');

    // One existing file is enough to refuse, and only it is named.
    const other = newDir();
    mkdirSync(join(other, 'tests'), { recursive: true });
    writeFileSync(join(other, 'tests/approve-small-claims.test.yaml'), 'mine\n');
    const one = await cli(['init', other, '--embedded']);
    expect(one.code).toBe(2);
    expect(one.err).toMatch(/already has tests\/approve-small-claims\.test\.yaml; nothing/);
    expect(filesIn(other)).toEqual(['tests/approve-small-claims.test.yaml']);

    const forced = await cli(['init', dir, '--embedded', '--force']);
    expect(forced.code).toBe(0);
    expect(readFileSync(rule, 'utf8')).toMatch(/^# yaml-language-server/);
    expect((await cli(['test', join(dir, 'tests')])).code).toBe(0);
  });

  it('adds the state directory to an existing .gitignore instead of replacing it', async () => {
    const dir = newDir();
    mkdirSync(dir);
    writeFileSync(join(dir, '.gitignore'), 'dist/');
    expect((await cli(['init', dir, '--embedded'])).code).toBe(0);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(
      "dist/\n# ledgerbot's state directory\n.state/\n",
    );
    expect((await cli(['init', dir, '--embedded', '--force'])).code).toBe(0);
    // Already there: not added twice.
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(
      "dist/\n# ledgerbot's state directory\n.state/\n",
    );
  });
});

describe('ledgerbot init usage errors exit 2 and write nothing', () => {
  const cases: [string, string[], RegExp][] = [
    ['--party without =', ['--party', 'approver'], /--party approver: expected alias=party-id/],
    ['a bad alias', ['--party', '1st=A::1220ab'], /the alias "1st" must start with a letter/],
    ['an alias twice', ['--party', 'a=A::12ab', '--party', 'a=B::12ab'], /"a" is given twice/],
    ['a bad party id', ['--party', 'a=Alice'], /"Alice" is not a party id/],
    ['an empty party id', ['--party', 'a='], /"" is not a party id/],
    ['a URL that is not one', ['--url', 'participant:7575'], /--url participant:7575: must start/],
    ['no URL at all', ['--url', 'not a url'], /--url not a url: not a URL/],
    ['another scheme', ['--url', 'ftp://p.example.com'], /must start with http:\/\/ or https:\/\//],
    ['credentials in the URL', ['--url', 'https://u:pw@p.example.com'], /must not carry a user/],
    ['--embedded with --url', ['--embedded', '--url', 'http://x.example.com'], /leave out --url/],
    ['--embedded with --party', ['--embedded', '--party', 'a=A::12ab'], /leave out --url/],
    ['an unknown flag', ['--bogus'], /Unknown option '--bogus'/],
    ['two directories', ['other'], /init takes one directory, not 2/],
  ];
  it.each(cases)('%s', async (_name, flags, message) => {
    const dir = newDir();
    const { code, err, out } = await cli(['init', dir, ...flags]);
    expect(err).toMatch(message);
    expect(err).toMatch(/^ledgerbot: /);
    expect(out).toBe('');
    expect(code).toBe(2);
    expect(existsSync(dir)).toBe(false);
  });

  it('says npx ledgerbot where npx finds it: installed in the project or one around it', async () => {
    const outer = newDir();
    mkdirSync(join(outer, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(outer, 'node_modules', '.bin', 'ledgerbot'), '');
    const init = await cli(['init', join(outer, 'bots', 'billing'), '--embedded']);
    expect(init.code).toBe(0);
    expect(init.out).toContain('  npx ledgerbot validate --config bot.config.yaml\n');
    expect(init.out).toContain('  npx ledgerbot run --config bot.config.yaml\n');
  });

  it('DIR that is a file', async () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    const { code, err } = await cli(['init', file, '--embedded']);
    expect(code).toBe(2);
    expect(err).toContain('exists and is not a directory');
  });

  it('DIR below a file, or a project path taken by a file: exit 2, said in words, nothing left', async () => {
    const file = join(tmp, 'another-file');
    writeFileSync(file, 'x');
    const under = await cli(['init', join(file, 'sub'), '--embedded']);
    expect(under.code).toBe(2);
    expect(under.err).toBe(
      `ledgerbot: cannot use ${join(file, 'sub')}: a part of ${join(file, 'sub')} is a file, not a directory\n`,
    );
    // The starter rule goes to rules/: a file named rules stops the write half way.
    const dir = newDir();
    mkdirSync(dir);
    writeFileSync(join(dir, 'rules'), 'not a directory');
    const blocked = await cli(['init', dir, '--embedded']);
    expect(blocked.code).toBe(2);
    expect(blocked.err).toBe(
      `ledgerbot: cannot write the project into ${dir}: ${join(dir, 'rules')} is already there, and is not what init would write there (the files it had written are removed)\n`,
    );
    expect(filesIn(dir)).toEqual(['rules']);
  });

  it('--help exits 0 and lists the flags; the command is in ledgerbot --help', async () => {
    const help = await cli(['init', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--embedded', '--url URL', '--party alias=id', '--force']) {
      expect(help.out).toContain(flag);
    }
    expect((await cli(['--help'])).out).toMatch(/^ {2}init\s+start a project/m);
  });
});

describe('ledgerbot run on an init --embedded project (child process)', () => {
  it('gets ready, fires the example rule on a new claim, and stops on SIGTERM with exit 0', async () => {
    const dir = newDir();
    expect((await cli(['init', dir, '--embedded'])).code).toBe(0);
    const bot = spawnBot(join(dir, 'bot.config.yaml'), { fromSources: true });
    try {
      const ready = await bot.waitForLine(
        (l) => l.msg === 'embedded sandbox ready',
        45_000,
        'the sandbox',
      );
      await bot.waitForLine(
        (l) => l.msg === 'bot state changed' && l.state === 'running',
        45_000,
        'running',
      );
      const { url, parties } = ready as unknown as {
        url: string;
        parties: { employee: string; approver: string };
      };
      // Something happens: the employee files a small claim, through the JSON Ledger API.
      const res = await fetch(`${url}/v2/commands/submit-and-wait`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          commands: [
            {
              CreateCommand: {
                templateId: '#starter:Expenses:Claim',
                createArguments: {
                  employee: parties.employee,
                  approver: parties.approver,
                  amount: '42.00',
                  currency: 'CHF',
                  description: 'Train ticket',
                },
              },
            },
          ],
          commandId: 'file-claim-1',
          userId: 'employee-app',
          actAs: [parties.employee],
        }),
      });
      expect(res.status).toBe(200);
      await res.body?.cancel();
      const done = await bot.waitForLine(
        (l) => l.msg === 'intent finished' && l.state === 'succeeded',
        45_000,
        'the example rule to fire',
      );
      expect(done.ruleId).toBe('approve-small-claims');
      bot.child.kill('SIGTERM');
      expect(await bot.exited).toEqual({ code: 0, signal: null });
    } finally {
      await bot.kill();
    }
  }, 60_000);
});
