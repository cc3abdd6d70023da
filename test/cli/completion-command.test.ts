import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, type CliResult } from '../support/cli-capture.js';
import { parseHelp } from '../../src/cli/commands/completion-command.js';
import { helpText } from '../../src/cli/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-completion-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function completion(shell: string): Promise<CliResult> {
  return cli(['completion', shell]);
}

/** The command names `ledgerbot --help` lists. */
async function commandNames(): Promise<string[]> {
  const text = await helpText();
  const section = text.slice(text.indexOf('Commands:\n'), text.indexOf('\nOptions:'));
  return [...section.matchAll(/^ {2}([a-z][a-z-]*) /gm)].map((m) => m[1]!);
}

const haveZsh = spawnSync('zsh', ['--version']).status === 0;

describe('ledgerbot completion bash', () => {
  it('is valid bash (bash -n) and offers every command of the table', async () => {
    const { code, out } = await completion('bash');
    expect(code).toBe(0);
    const file = join(tmp, 'ledgerbot.bash');
    writeFileSync(file, out);
    const check = spawnSync('bash', ['-n', file], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
    const names = await commandNames();
    expect(names).toEqual(expect.arrayContaining(['run', 'validate', 'test', 'completion']));
    const top = /compgen -W '([^']*)'/.exec(out)![1]!.split(' ');
    for (const name of names) {
      expect(top, name).toContain(name);
      expect(out, name).toContain(`\n    ${name})\n`);
    }
  });

  /** What bash completes for the words typed so far (the last one being completed). */
  async function complete(...typed: string[]): Promise<string[]> {
    const file = join(tmp, 'ledgerbot.bash');
    writeFileSync(file, (await completion('bash')).out);
    const words = ['ledgerbot', ...typed].map((w) => `'${w}'`).join(' ');
    const script = `source '${file}'; cd '${tmp}'; COMP_WORDS=(${words}); COMP_CWORD=${typed.length}; _ledgerbot; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter((l) => l !== '');
  }

  it('completes commands, their flags (read from their --help), subcommands and file values', async () => {
    expect(await complete('va')).toEqual(['validate']);
    expect(await complete('comp')).toEqual(['completion']);
    expect(await complete('test', '--')).toEqual(
      expect.arrayContaining(['--config', '--verbose', '--no-color', '--help']),
    );
    expect(await complete('sandbox', '--id')).toEqual(['--idle-timeout']);
    expect(await complete('dead-letters', '')).toEqual(
      expect.arrayContaining(['list', 'show', 'retry', 'drop']),
    );
    writeFileSync(join(tmp, 'my.config.yaml'), '');
    expect(await complete('run', '--config', 'my.c')).toEqual(['my.config.yaml']);
    expect(await complete('demo', '--port', '')).toEqual([]);
  });
});

describe('ledgerbot completion zsh', () => {
  it('offers every command of the table', async () => {
    const { code, out } = await completion('zsh');
    expect(code).toBe(0);
    expect(out.startsWith('#compdef ledgerbot\n')).toBe(true);
    for (const name of await commandNames()) expect(out, name).toContain(`\n    '${name}:`);
    expect(out).toContain("'*--model[");
  });

  it.skipIf(!haveZsh)(
    `is valid zsh (zsh -n)${haveZsh ? '' : ' (skipped: zsh is not installed)'}`,
    async () => {
      const file = join(tmp, '_ledgerbot');
      writeFileSync(file, (await completion('zsh')).out);
      const check = spawnSync('zsh', ['-n', file], { encoding: 'utf8' });
      expect(check.stderr).toBe('');
      expect(check.status).toBe(0);
    },
  );
});

describe('ledgerbot completion', () => {
  it('needs bash or zsh (exit 2)', async () => {
    const r = await completion('fish');
    expect(r.err).toMatch(/completion needs one shell: bash or zsh/);
    expect(r.code).toBe(2);
  });

  it('reads flags, their values and subcommands from a help text', () => {
    const help = `Usage: ledgerbot thing list|show ID|drop ID --config FILE

Options:
  --config FILE   the bot config
  --json          print JSON
  --user ID:P1,P2  a user
  -h, --help      show this help
`;
    expect(parseHelp('thing', help)).toEqual({
      subcommands: ['list', 'show', 'drop'],
      flags: [
        { flag: '--config', value: 'FILE', description: 'the bot config' },
        { flag: '--json', description: 'print JSON' },
        { flag: '--user', value: 'ID:P1,P2', description: 'a user' },
        { flag: '--help', description: 'show this help' },
      ],
    });
  });
});
