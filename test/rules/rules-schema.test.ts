import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderRuleTestsSchema } from '../../src/rules/render-rule-tests-schema.js';
import { renderRulesSchema } from '../../src/rules/render-rules-schema.js';
import { RULES_SCHEMA } from '../../src/rules/rules-schema.js';
import { loadBotConfig } from '../../src/runtime/config/load-bot-config.js';
import {
  CONFIG_DESCRIPTIONS,
  renderBotConfigSchema,
} from '../../src/runtime/config/render-bot-config-schema.js';

const published = new URL('../../schema/rules.schema.json', import.meta.url);

describe('rules JSON Schema', () => {
  it('the checked-in schema/rules.schema.json is current (run `npm run gen:schema` if not)', () => {
    expect(readFileSync(published, 'utf8')).toBe(renderRulesSchema());
  });

  it('is a valid draft-07 schema that accepts the examples and rejects unknown keys', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(JSON.parse(readFileSync(published, 'utf8')) as object);
    const dir = new URL('../../examples/invoices/rules/', import.meta.url);
    const names = readdirSync(dir).filter((n) => n.endsWith('.yaml'));
    expect(names.length).toBeGreaterThanOrEqual(3);
    for (const name of names) {
      const doc: unknown = parse(readFileSync(new URL(name, dir), 'utf8'));
      expect(validate(doc), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    expect(validate({ version: 1, rules: [], extra: true })).toBe(false);
    expect(validate({ version: 2, rules: [] })).toBe(false);
  });

  it('fills defaults, so editors and the loader agree on them', () => {
    const ajv = new Ajv({ useDefaults: true, strict: false });
    const validate = ajv.compile(RULES_SCHEMA);
    const doc = {
      version: 1,
      rules: [
        {
          id: 'x',
          schedule: { cron: '@daily' },
          then: [{ exercise: { template: '#p:M:E', contractId: 'c', choice: 'C' }, actAs: 'a' }],
        },
      ],
    };
    expect(validate(doc)).toBe(true);
    expect(doc.rules[0]).toMatchObject({
      enabled: true,
      revision: 1,
      description: '',
      labels: {},
      schedule: { timezone: 'UTC', catchUp: 'last', maxCatchUp: 10, jitter: '0s' },
      retry: { maxAttempts: 10, initialDelay: '1s', maxDelay: '1m', deadline: '1h' },
      rateLimit: { perSecond: 10, burst: 20 },
      concurrency: 4,
      then: [{ exercise: { choiceArgument: {} } }],
    });
  });
});

// The other published schemas, checked the same way: current, valid, and named by a
// `# yaml-language-server: $schema=...` modeline in every example that they accept.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Files below `dir` (relative to the root) whose name matches, skipping node_modules. */
function filesUnder(dir: string, name: RegExp): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') out.push(...filesUnder(path, name));
    else if (entry.isFile() && name.test(entry.name)) out.push(path);
  }
  return out.sort();
}

const PUBLISHED = [
  {
    file: 'schema/rules.schema.json',
    render: renderRulesSchema,
    examples: ['rules', 'examples'].flatMap((d) =>
      filesUnder(d, /\.ya?ml$/).filter(
        (f) => !/\.test\.ya?ml$/.test(f) && !/(model|config)\.yaml$/.test(f),
      ),
    ),
  },
  {
    file: 'schema/rule-tests.schema.json',
    render: renderRuleTestsSchema,
    examples: ['tests', 'examples'].flatMap((d) => filesUnder(d, /\.test\.ya?ml$/)),
  },
  {
    file: 'schema/bot-config.schema.json',
    render: renderBotConfigSchema,
    examples: ['bot.config.yaml', ...filesUnder('examples', /config\.ya?ml$/)],
  },
] as const;

describe.each(PUBLISHED)('$file', ({ file, render, examples }) => {
  const text = readFileSync(join(ROOT, file), 'utf8');

  it('is current (run `npm run gen:schema` if not)', () => {
    expect(text).toBe(render());
  });

  it('accepts every example, each naming it in its yaml-language-server modeline', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(JSON.parse(text) as object);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) {
      const yaml = readFileSync(join(ROOT, example), 'utf8');
      const modeline = /^# yaml-language-server: \$schema=(\S+)\n/.exec(yaml);
      expect(modeline?.[1], `${example}: the first line names the schema`).toBe(
        relative(dirname(join(ROOT, example)), join(ROOT, file)),
      );
      const doc: unknown = parse(yaml);
      expect(validate(doc), `${example}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});

describe('the bot config schema', () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(
    JSON.parse(readFileSync(join(ROOT, 'schema/bot-config.schema.json'), 'utf8')) as object,
  );
  const base = { ledger: { url: 'http://x', userId: 'bot' }, rules: 'rules/' };

  it('rejects what the loader rejects, and takes ${VAR} where the loader fills it in', () => {
    expect(validate(base)).toBe(true);
    expect(validate({ ...base, extra: 1 })).toBe(false);
    expect(validate({ ...base, http: { port: 'many' } })).toBe(false);
    expect(validate({ ...base, http: { port: '${PORT:-9464}' } })).toBe(true);
    expect(validate({ ...base, state: { retention: 'a week' } })).toBe(false);
    expect(validate({ ...base, state: { retention: '${RETENTION}' } })).toBe(true);
    expect(validate({ ...base, log: { level: 'loud' } })).toBe(false);
    expect(validate({ ...base, ledger: { ...base.ledger, auth: { type: 'static' } } })).toBe(false);
    expect(validate({ ...base, tests: ['tests/', 'more/'] })).toBe(true);
  });

  it('describes every top-level key, and describes no key that is not there', () => {
    const schema = JSON.parse(
      readFileSync(join(ROOT, 'schema/bot-config.schema.json'), 'utf8'),
    ) as object;
    const described = new Map<string, unknown>();
    const walk = (node: unknown, path: string): void => {
      if (node === null || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      for (const [k, v] of Object.entries((n.properties ?? {}) as Record<string, unknown>)) {
        const at = path === '' ? k : `${path}.${k}`;
        if (!described.has(at)) described.set(at, (v as { description?: unknown }).description);
        walk(v, at);
      }
      for (const list of ['oneOf', 'anyOf'] as const) {
        for (const b of (n[list] ?? []) as unknown[]) walk(b, path);
      }
    };
    walk(schema, '');
    for (const key of Object.keys(CONFIG_DESCRIPTIONS)) expect(described.has(key), key).toBe(true);
    for (const [key, text] of described) {
      if (!key.includes('.')) expect(text, key).toEqual(expect.any(String));
    }
  });

  it('agrees with the loader on the examples', () => {
    for (const path of ['bot.config.yaml', 'examples/invoices/bot.config.yaml']) {
      const text = readFileSync(join(ROOT, path), 'utf8');
      expect(() => loadBotConfig({ path: resolve(ROOT, path), text, env: {} })).not.toThrow();
    }
  });
});
