import { describe, expect, it } from 'vitest';
import {
  formatSourceProblem,
  parseYamlSource,
  schemaChecker,
  type SchemaCheckOptions,
} from '../../../src/core/source/index.js';

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'server'],
  properties: {
    name: { type: 'string', minLength: 1 },
    level: { enum: ['debug', 'info', 'warn'] },
    count: { type: 'integer', minimum: 1, default: 3 },
    every: { type: 'string', pattern: '^\\d+[smh]$' },
    server: {
      type: 'object',
      additionalProperties: false,
      required: ['port'],
      properties: { port: { type: 'integer' }, password: { type: 'string', minLength: 8 } },
    },
  },
};

function check(text: string, options: SchemaCheckOptions<'BAD_DURATION'> = {}): string[] {
  const parsed = parseYamlSource('w.yaml', text, { noun: 'widget file' });
  if (!parsed.ok) throw new Error('does not parse');
  const result = schemaChecker(SCHEMA, options)(parsed.source.value, parsed.source.at);
  return result.problems.map((p) => `${formatSourceProblem(p)} [${p.code}]`);
}

describe('schemaChecker', () => {
  it('passes a valid file and fills in defaults when asked to', () => {
    const parsed = parseYamlSource('w.yaml', 'name: a\nserver: {port: 1}\n', {
      noun: 'widget file',
    });
    if (!parsed.ok) throw new Error('does not parse');
    const result = schemaChecker(SCHEMA, { ajv: { useDefaults: true } })(
      parsed.source.value,
      parsed.source.at,
    );
    expect(result).toEqual({ valid: true, problems: [], errorPaths: [] });
    expect(parsed.source.value).toMatchObject({ count: 3 });
  });

  it('reports every problem at once, each at file:line:col, with did-you-mean hints', () => {
    const text = [
      'name: ""',
      'levl: info',
      'count: many',
      'server:',
      '  port: 80',
      '  colour: red',
      '',
    ].join('\n');
    expect(check(text)).toEqual([
      'w.yaml:2:1: unknown key "levl" at the top of the file\n    hint: did you mean "level"? [UNKNOWN_KEY]',
      'w.yaml:1:7: `name` is empty [BAD_VALUE]',
      'w.yaml:3:8: `count` must be a whole number, not "many" [WRONG_TYPE]',
      'w.yaml:6:3: unknown key "colour" in `server`\n    hint: allowed here: port, password [UNKNOWN_KEY]',
    ]);
  });

  it('explains a missing key where its mapping is named, with the loader hint', () => {
    expect(
      check('name: a\nserver:\n  password: longenough\n', {
        missingHints: { port: 'add `port: 80`' },
      }),
    ).toEqual(['w.yaml:2:1: `server` has no `port`\n    hint: add `port: 80` [MISSING_KEY]']);
  });

  it('suggests the closest enum value', () => {
    expect(check('name: a\nlevel: inf\nserver: {port: 1}\n')).toEqual([
      'w.yaml:2:8: `level` must be one of debug, info, warn, not "inf"\n    hint: did you mean "info"? [BAD_VALUE]',
    ]);
  });

  it('names what a pattern means, with the loader code and hint', () => {
    const options = {
      patterns: {
        '^\\d+[smh]$': { what: 'a duration', hint: 'e.g. 5m', code: 'BAD_DURATION' as const },
      },
    };
    expect(check('name: a\nevery: soon\nserver: {port: 1}\n', options)).toEqual([
      'w.yaml:2:8: `every`: "soon" is not a duration\n    hint: e.g. 5m [BAD_DURATION]',
    ]);
  });

  it('never shows a secret value', () => {
    const options = { secret: (path: readonly (string | number)[]) => path.includes('password') };
    const [problem] = check('name: a\nserver: {port: 1, password: 123}\n', options);
    expect(problem).toBe(
      'w.yaml:2:29: `server.password` must be text, not the (secret) value [WRONG_TYPE]',
    );
  });

  it('takes the loader explanation, or drops an error when it returns null', () => {
    const options: SchemaCheckOptions<'BAD_DURATION'> = {
      explain: (e, path) =>
        e.keyword === 'required'
          ? null
          : e.keyword === 'type'
            ? { path, key: false, code: 'WRONG_TYPE', message: 'count it', hint: 'a number' }
            : undefined,
    };
    expect(check('count: x\n', options)).toEqual([
      'w.yaml:1:8: count it\n    hint: a number [WRONG_TYPE]',
    ]);
  });

  it('says an empty file is empty', () => {
    expect(check('')).toEqual(['w.yaml:1:1: the file is empty [WRONG_TYPE]']);
  });

  it('lists every path ajv complained about', () => {
    const parsed = parseYamlSource('w.yaml', 'name: 5\nserver: {port: x}\n', {
      noun: 'widget file',
    });
    if (!parsed.ok) throw new Error('does not parse');
    const result = schemaChecker(SCHEMA)(parsed.source.value, parsed.source.at);
    expect(result.errorPaths).toEqual([['name'], ['server', 'port']]);
  });
});

describe('schemaChecker with oneOf and anyOf', () => {
  const AUTH = {
    type: 'object',
    properties: {
      auth: {
        type: 'object',
        discriminator: { propertyName: 'type' },
        required: ['type'],
        oneOf: [
          {
            properties: { type: { const: 'none' } },
            additionalProperties: false,
          },
          {
            properties: { type: { const: 'static' }, token: { type: 'string' } },
            required: ['token'],
            additionalProperties: false,
          },
        ],
      },
      paths: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    },
  };

  function run(text: string, alternatives?: 'most-telling'): string[] {
    const parsed = parseYamlSource('a.yaml', text, { noun: 'widget file' });
    if (!parsed.ok) throw new Error('does not parse');
    const check = schemaChecker(AUTH, {
      ajv: { discriminator: true },
      ...(alternatives === undefined ? {} : { alternatives }),
    });
    return check(parsed.source.value, parsed.source.at).problems.map((p) => formatSourceProblem(p));
  }

  it('keeps the errors of the branch a discriminator picked: they are the real ones', () => {
    expect(run('auth: {type: static, tokn: x}\n')).toEqual([
      'a.yaml:1:1: `auth` has no `token`',
      'a.yaml:1:22: unknown key "tokn" in `auth`\n    hint: did you mean "token"?',
    ]);
  });

  it('explains a failed anyOf once, not each of its branches', () => {
    expect(run('paths: 5\n')).toEqual(['a.yaml:1:8: `paths` is none of the forms allowed here']);
  });

  it('with most-telling alternatives, explains the deepest error inside the forms instead', () => {
    expect(run('paths: [a, 5]\n', 'most-telling')).toEqual([
      'a.yaml:1:12: `paths[1]` must be text, not 5',
    ]);
    expect(run('paths: [a, 5]\n')).toEqual([
      'a.yaml:1:8: `paths` is none of the forms allowed here',
    ]);
  });
});

describe('schemaChecker: keys refused by propertyNames', () => {
  const NAMES = {
    type: 'object',
    properties: {
      tags: { type: 'object', propertyNames: { pattern: '^[a-z]+$' } },
    },
  };
  const run = (options: SchemaCheckOptions<never>, perCall?: SchemaCheckOptions<never>) => {
    const parsed = parseYamlSource('n.yaml', 'tags:\n  ok: 1\n  Bad1: 2\n', { noun: 'file' });
    if (!parsed.ok) throw new Error('does not parse');
    const checker = schemaChecker(NAMES, options);
    return checker(parsed.source.value, parsed.source.at, perCall).problems.map((p) =>
      formatSourceProblem(p),
    );
  };

  it('says where the name is not valid, by default', () => {
    expect(run({})).toEqual(['n.yaml:3:3: "Bad1" is not a valid name in `tags`']);
  });

  it("uses the loader's badName words, and per-call wording over the checker's", () => {
    const badName = (name: string) => ({ message: `"${name}" is no tag`, hint: 'lower case' });
    expect(run({ badName })).toEqual(['n.yaml:3:3: "Bad1" is no tag\n    hint: lower case']);
    expect(run({ badName }, { badName: (name) => ({ message: `not ${name}` }) })).toEqual([
      'n.yaml:3:3: not Bad1',
    ]);
  });
});
