import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { renderRulesSchema } from '../../src/rules/render-rules-schema.js';
import { RULES_SCHEMA } from '../../src/rules/rules-schema.js';

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
      retry: { maxAttempts: 5, initialDelay: '1s', maxDelay: '1m', deadline: '10m' },
      rateLimit: { perSecond: 10, burst: 20 },
      concurrency: 4,
      then: [{ exercise: { choiceArgument: {} } }],
    });
  });
});
