import { describe, expect, expectTypeOf, it } from 'vitest';
import { commandHelp, defineCommand } from '../../src/cli/define-command.js';
import { runCli } from '../../src/cli/run-cli.js';

function capture() {
  let out = '';
  return {
    io: { out: (t: string) => void (out += t), err: () => undefined },
    out: () => out,
  };
}

const spec = {
  name: 'thing',
  summary: 'do a thing',
  usage: 'thing [--config FILE] [--count N] [paths...]',
  description: 'Does a thing.',
  options: {
    config: { type: 'string', default: 'bot.config.yaml', value: 'FILE', help: 'the config' },
    count: { type: 'string', value: 'N', help: 'how many\n(default: all of them)' },
    verbose: { type: 'boolean', help: 'say more' },
    'a-rather-long-flag-name': { type: 'boolean', help: 'goes on its own line' },
    tag: { type: 'string', multiple: true, value: 'T', help: 'a tag (repeatable)' },
  },
  positionals: true,
  footer: 'Exit status: 0 done.',
} as const;

describe('defineCommand', () => {
  it('renders the help from the declaration, --help last, long flags on their own line', () => {
    expect(commandHelp({ ...spec, run: () => Promise.resolve(0) })).toBe(
      [
        'Usage: ledgerbot thing [--config FILE] [--count N] [paths...]',
        '',
        'Does a thing.',
        '',
        'Options:',
        '  --config FILE  the config',
        '  --count N      how many',
        '                 (default: all of them)',
        '  --verbose      say more',
        '  --a-rather-long-flag-name',
        '                 goes on its own line',
        '  --tag T        a tag (repeatable)',
        '  -h, --help     show this help',
        '',
        'Exit status: 0 done.',
        '',
      ].join('\n'),
    );
  });

  it('parses typed values (defaults filled) and positionals, and answers --help with 0', async () => {
    let seen: unknown;
    const command = defineCommand({
      ...spec,
      run: ({ values, positionals }) => {
        expectTypeOf(values.config).toEqualTypeOf<string>();
        expectTypeOf(values.count).toEqualTypeOf<string | undefined>();
        expectTypeOf(values.verbose).toEqualTypeOf<boolean | undefined>();
        expectTypeOf(values.tag).toEqualTypeOf<string[] | undefined>();
        seen = { values: { ...values }, positionals };
        return Promise.resolve(7);
      },
    });
    const c = capture();
    expect(await command.run(['a', '--tag', 'x', '--tag', 'y', 'b', '--verbose'], c.io)).toBe(7);
    expect(seen).toEqual({
      values: { config: 'bot.config.yaml', tag: ['x', 'y'], verbose: true },
      positionals: ['a', 'b'],
    });
    const h = capture();
    expect(await command.run(['-h'], h.io)).toBe(0);
    expect(h.out()).toContain('  -h, --help     show this help\n');
  });

  it('refuses an unknown flag and, unless declared, positionals', async () => {
    const command = defineCommand({ ...spec, positionals: false, run: () => Promise.resolve(0) });
    await expect(command.run(['--nope'], capture().io)).rejects.toMatchObject({
      code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION',
    });
    await expect(command.run(['word'], capture().io)).rejects.toMatchObject({
      code: 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL',
    });
  });

  it('a usage error of a real command exits 2 through runCli', async () => {
    let err = '';
    const code = await runCli(['status', '--nope'], {
      out: () => undefined,
      err: (t) => void (err += t),
    });
    expect(code).toBe(2);
    expect(err).toMatch(/^ledgerbot: Unknown option '--nope'/);
  });
});
