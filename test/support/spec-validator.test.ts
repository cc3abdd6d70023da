import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { skipWithoutShared } from './shared-files.js';
import { specRoutes } from './spec-routes.js';
import { CANTON_NULLABLE_FIELDS, bundledSpec, specValidator } from './spec-validator.js';

// The official specs are the oracle: the committed bundle (and the wire types) must be exactly what
// `npm run gen:wire` makes of ../shared's specs. A clone without ../shared cannot compare.
describe.skipIf(skipWithoutShared('ledger-api/openapi-3.5.x.yaml'))(
  'the committed spec bundle (compared with ../shared/ledger-api; skipped without it)',
  () => {
    it('is what gen:wire generates from the official specs', () => {
      const root = fileURLToPath(new URL('../../', import.meta.url));
      const out = execFileSync(process.execPath, ['scripts/gen-wire-types.mjs', '--check'], {
        cwd: root,
        encoding: 'utf8',
      });
      expect(out).toMatch(/up to date/);
    }, 60_000);
  },
);

describe('the spec bundle', () => {
  it('holds every spec with its schemas, and the operations or channels', () => {
    for (const name of ['openapi-3.5', 'openapi-3.4'] as const) {
      expect(Object.keys(bundledSpec(name).schemas).length).toBeGreaterThan(100);
      expect(bundledSpec(name).operations?.length).toBeGreaterThan(40);
    }
    for (const name of ['asyncapi-3.5', 'asyncapi-3.4'] as const) {
      expect(Object.keys(bundledSpec(name).channels ?? {})).toContain('/v2/updates');
    }
  });
});

describe('specValidator', () => {
  const v = specValidator('openapi-3.5');

  it('accepts a well-formed command and rejects a misspelled field', () => {
    const good = {
      commands: [{ CreateCommand: { templateId: '#pkg:M:T', createArguments: { a: '1' } } }],
      commandId: 'c1',
      actAs: ['Alice::1220'],
    };
    expect(v.errors('JsCommands', good)).toEqual([]);
    const bad = { ...good, comandId: 'c1' };
    expect(v.errors('JsCommands', bad).join('\n')).toMatch(/comandId|commandId/);
  });

  it('rejects a dedup period without its value wrapper', () => {
    expect(v.errors('DeduplicationPeriod', { DeduplicationOffset: { value: 5 } })).toEqual([]);
    expect(v.errors('DeduplicationPeriod', { DeduplicationOffset: 5 })).not.toEqual([]);
  });

  it('accepts null exactly for the fields Canton prints as null', () => {
    const error = {
      code: 'X',
      cause: 'y',
      context: {},
      errorCategory: 8,
      correlationId: null,
      traceId: null,
      grpcCodeValue: null,
      retryInfo: null,
      definiteAnswer: null,
    };
    expect(v.errors('JsCantonError', error)).toEqual([]);
    expect(v.errors('JsCantonError', { ...error, cause: null })).not.toEqual([]);
    expect(
      v.errors('JsGetActiveContractsPageResponse', {
        activeContracts: [],
        activeAtOffset: 3,
        nextPageToken: null,
      }),
    ).toEqual([]);
    expect(
      v.errors('JsGetActiveContractsPageResponse', {
        activeContracts: [],
        activeAtOffset: null,
      }),
    ).not.toEqual([]);
    // Every listed field exists in the 3.5 specs (a typo would silently allow nothing).
    for (const spec of [v, specValidator('asyncapi-3.5')]) {
      const schemas = spec.spec.schemas as Record<string, { properties?: object }>;
      for (const [name, fields] of Object.entries(CANTON_NULLABLE_FIELDS)) {
        const props = schemas[name]?.properties;
        if (props === undefined) continue;
        for (const f of fields) expect(Object.keys(props), `${name}.${f}`).toContain(f);
      }
    }
    for (const name of Object.keys(CANTON_NULLABLE_FIELDS)) {
      expect(v.spec.schemas[name], name).toBeDefined();
    }
  });

  it('loads the asyncapi spec too', () => {
    const a = specValidator('asyncapi-3.5');
    expect(a.has('JsGetUpdatesResponse')).toBe(true);
  });
});

describe('specRoutes', () => {
  const routes = specRoutes('openapi-3.5');

  it('maps a path to its operation, literal segments before parameters', () => {
    expect(routes.find('GET', '/v2/parties/participant-id')?.responseSchema).toBe(
      'GetParticipantIdResponse',
    );
    expect(routes.find('GET', '/v2/parties/Alice::1220')?.responseSchema).toBe(
      'GetPartiesResponse',
    );
    expect(routes.find('POST', '/v2/updates?limit=5')?.responseSchema).toEqual({
      arrayOf: 'JsGetUpdatesResponse',
    });
    expect(routes.find('POST', '/v2/commands/async/submit')?.requestSchema).toBe('JsCommands');
  });

  it('rejects a request body that does not match the operation', () => {
    expect(() => routes.assertRequest('POST', '/v2/state/ledger-end', {})).toThrow();
    expect(() =>
      routes.assertRequest('POST', '/v2/commands/async/submit', { commands: [] }),
    ).toThrow(/JsCommands/);
  });
});
