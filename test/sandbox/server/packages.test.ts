import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/core/sha256-hex.js';
import { readPackagePayload } from '../../../src/daml-lf/read-dalf.js';
import type { Sandbox } from '../../../src/sandbox/start-sandbox.js';
import { specRoutes } from '../../support/spec-routes.js';
import { syntheticDar } from '../../support/synthetic-dar.js';
import { call, INVOICES_MODEL, startTestSandbox } from './sandbox-fixture.js';

const routes = specRoutes('openapi-3.5');
const dar = syntheticDar();
let sb: Sandbox;

beforeAll(async () => {
  sb = await startTestSandbox({ dars: [dar.bytes], models: [INVOICES_MODEL] });
});

afterAll(async () => {
  await sb.stop();
});

async function get(path: string): Promise<{ status: number; body: unknown; raw: Response }> {
  const raw = await fetch(sb.url + path);
  const type = raw.headers.get('content-type') ?? '';
  const body = type.includes('json') ? await raw.clone().json() : undefined;
  return { status: raw.status, body, raw };
}

async function packageIds(): Promise<string[]> {
  const r = await get('/v2/packages');
  expect(r.status).toBe(200);
  routes.assertResponse('GET', '/v2/packages', r.status, r.body);
  return (r.body as { packageIds: string[] }).packageIds;
}

describe('GET /v2/packages', () => {
  it('lists every package: each of the DAR’s, and the model’s own', async () => {
    const ids = await packageIds();
    for (const p of dar.packages) expect(ids).toContain(p.packageId);
    const invoices = ids.filter((id) => !dar.packages.some((p) => p.packageId === id));
    expect(invoices).toHaveLength(1);
    expect(ids).toHaveLength(dar.packages.length + 1);
  });
});

describe('GET /v2/packages/{id}', () => {
  it('answers each archive’s payload as Canton does: octet-stream, the id in Canton-Package-Hash', async () => {
    for (const id of await packageIds()) {
      const r = await get(`/v2/packages/${id}`);
      expect(r.status).toBe(200);
      expect(r.raw.headers.get('content-type')).toBe('application/octet-stream');
      expect(r.raw.headers.get('canton-package-hash')).toBe(id);
      const payload = new Uint8Array(await r.raw.arrayBuffer());
      expect(sha256Hex(payload)).toBe(id);
      // What a client reads back is the package: the model's as its signature says.
      const read = readPackagePayload(payload, { source: 'test', packageId: id });
      const known = dar.packages.find((p) => p.packageId === id);
      expect(read.signature.name).toBe(known?.signature.name ?? 'invoices');
      if (known === undefined) {
        expect(read.signature.modules.map((m) => m.name).sort()).toEqual([
          'Automation',
          'Invoice',
          'Payment',
        ]);
      }
    }
  });

  it('answers PACKAGE_NOT_FOUND (404) for an id it does not have', async () => {
    const id = 'f'.repeat(64);
    const r = await get(`/v2/packages/${id}`);
    expect(r.status).toBe(404);
    routes.assertResponse('GET', `/v2/packages/${id}`, r.status, r.body);
    expect(r.body).toMatchObject({
      code: 'PACKAGE_NOT_FOUND',
      cause: 'Could not find package.',
      errorCategory: 11,
      resources: [['ErrorResource(PACKAGE)', id]],
    });
  });

  it('answers INVALID_ARGUMENT (400) for an id that is not a Daml-LF package id', async () => {
    for (const [id, problem] of [
      ['not.an.id', 'non expected character 0x2e in Daml-LF Package ID "not.an.id"'],
      ['a'.repeat(65), 'Daml-LF Package ID is too long (max: 64)'],
    ] as const) {
      for (const path of [`/v2/packages/${id}`, `/v2/packages/${id}/status`]) {
        const r = await get(path);
        expect(r.status, path).toBe(400);
        routes.assertResponse('GET', path, r.status, r.body);
        expect(r.body).toMatchObject({
          code: 'INVALID_ARGUMENT',
          cause: `The submitted request has invalid arguments: Invalid package id: ${problem}`,
        });
      }
    }
  });
});

describe('GET /v2/packages/{id}/status', () => {
  it('says REGISTERED for a package it has, UNSPECIFIED otherwise', async () => {
    const path = `/v2/packages/${dar.main.packageId}/status`;
    const known = await get(path);
    routes.assertResponse('GET', path, known.status, known.body);
    expect(known.body).toEqual({ packageStatus: 'PACKAGE_STATUS_REGISTERED' });
    const other = await get(`/v2/packages/${'0'.repeat(64)}/status`);
    expect(other.body).toEqual({ packageStatus: 'PACKAGE_STATUS_UNSPECIFIED' });
  });
});

describe('uploading', () => {
  it('still answers 501: packages are registered at start', async () => {
    const r = await call(sb, 'POST', '/v2/dars', 'x');
    expect(r.status).toBe(501);
    expect((r.body as { cause: string }).cause).toMatch(/registers its packages at start/);
  });
});
