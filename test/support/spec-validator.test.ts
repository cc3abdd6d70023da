import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { specRoutes } from './spec-routes.js';
import {
  CANTON_NULLABLE_FIELDS,
  SHARED_AVAILABLE,
  SHARED_LEDGER_API_DIR,
  SPEC_DIR,
  SPEC_FILES,
  specValidator,
} from './spec-validator.js';

// The official specs are the oracle: the committed copies must be exactly ../shared's. A clone
// without ../shared cannot compare (CI always has it: .ci/run refuses to run without it).
describe.skipIf(!SHARED_AVAILABLE)('the committed spec copies (needs ../shared/ledger-api)', () => {
  for (const file of Object.values(SPEC_FILES)) {
    it(`${file} is byte for byte ../shared's`, () => {
      expect(readFileSync(SPEC_DIR + file, 'utf8')).toBe(
        readFileSync(SHARED_LEDGER_API_DIR + file, 'utf8'),
      );
    });
  }
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
      const schemas = (
        spec.spec as { components: { schemas: Record<string, { properties?: object }> } }
      ).components.schemas;
      for (const [name, fields] of Object.entries(CANTON_NULLABLE_FIELDS)) {
        const props = schemas[name]?.properties;
        if (props === undefined) continue;
        for (const f of fields) expect(Object.keys(props), `${name}.${f}`).toContain(f);
      }
    }
    const openapi = v.spec as { components: { schemas: Record<string, unknown> } };
    for (const name of Object.keys(CANTON_NULLABLE_FIELDS)) {
      expect(openapi.components.schemas[name], name).toBeDefined();
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
