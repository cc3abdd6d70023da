import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/sha256-hex.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { LedgerUsageError } from '../../src/ledger/ledger-usage-error.js';
import { isPackageId } from '../../src/ledger/package-archive.js';
import { cantonError } from './samples.js';

// GET /v2/packages/{id} against a real HTTP server on 127.0.0.1: the payload arrives as bytes,
// is checked against the id and the Canton-Package-Hash header, and every failure is one of the
// client's usual errors.

const PAYLOAD = randomBytes(5000);
const ID = sha256Hex(PAYLOAD);

type Seen = { method: string; url: string; headers: IncomingMessage['headers'] };

const servers: Server[] = [];
const clients: LedgerClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ client: LedgerClient; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = await LedgerClient.create({
    url,
    auth: {
      token: () => Promise.resolve('tok-1'),
      invalidate: () => undefined,
      close: () => Promise.resolve(),
    },
  });
  clients.push(client);
  return { client, seen };
}

function octets(res: ServerResponse, bytes: Uint8Array, hash: string | undefined = ID): void {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    ...(hash === undefined ? {} : { 'canton-package-hash': hash }),
  });
  res.end(bytes);
}

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('LedgerClient.packageArchive', () => {
  it('GETs /v2/packages/{id} with the token and returns the payload bytes', async () => {
    const { client, seen } = await serve((_req, res) => octets(res, PAYLOAD));
    const bytes = await client.packageArchive(ID);
    expect(Buffer.from(bytes).equals(PAYLOAD)).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'GET', url: `/v2/packages/${ID}` });
    expect(seen[0]?.headers.authorization).toBe('Bearer tok-1');
  });

  it('takes an answer without the Canton-Package-Hash header when the bytes match the id', async () => {
    const { client } = await serve((_req, res) => octets(res, PAYLOAD, undefined));
    expect(Buffer.from(await client.packageArchive(ID)).equals(PAYLOAD)).toBe(true);
  });

  it('reads a payload that arrives in many chunks', async () => {
    const big = randomBytes(3 * 1024 * 1024);
    const { client } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let i = 0; i < big.length; i += 64 * 1024) res.write(big.subarray(i, i + 64 * 1024));
      res.end();
    });
    const bytes = await client.packageArchive(sha256Hex(big));
    expect(bytes.length).toBe(big.length);
    expect(Buffer.from(bytes).equals(big)).toBe(true);
  });

  it('refuses bytes whose sha256 is not the id asked for', async () => {
    const other = randomBytes(100);
    const { client } = await serve((_req, res) => octets(res, other));
    const err = await caught(client.packageArchive(ID));
    expect(err).toBeInstanceOf(LedgerTransportError);
    expect(err).toMatchObject({ failure: 'bad-response', request: `GET /v2/packages/${ID}` });
    expect(err.message).toContain(`the sha256 of its 100 bytes is ${sha256Hex(other)}`);
  });

  it('refuses an answer whose Canton-Package-Hash header names another package', async () => {
    const otherId = sha256Hex('other');
    const { client } = await serve((_req, res) => octets(res, PAYLOAD, otherId));
    const err = await caught(client.packageArchive(ID));
    expect(err).toMatchObject({ failure: 'bad-response', code: 'LEDGER_TRANSPORT_BAD_RESPONSE' });
    expect(err.message).toContain(`Canton-Package-Hash header says ${otherId}`);
  });

  it('an unknown package is the participant’s own error (PACKAGE_NOT_FOUND, 404)', async () => {
    const body = cantonError('PACKAGE_NOT_FOUND', 11, 5, `Package not found: ${ID}`);
    const { client } = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    const err = await caught(client.packageArchive(ID));
    expect(err).toBeInstanceOf(LedgerApiError);
    expect(err).toMatchObject({ code: 'PACKAGE_NOT_FOUND', status: 404 });
  });

  it('a plain-text 400 (the spec’s "Invalid value") is a LedgerApiError too', async () => {
    const { client } = await serve((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('Invalid value for: path parameter package-id');
    });
    const err = await caught(client.packageArchive(ID));
    expect(err).toBeInstanceOf(LedgerApiError);
    expect(err.message).toContain('Invalid value for: path parameter package-id');
  });

  it('a JSON page where bytes were expected is a bad response', async () => {
    const { client } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"packageIds":[]}');
    });
    const err = await caught(client.packageArchive(ID));
    expect(err).toMatchObject({ failure: 'bad-response' });
    expect(err.message).toContain('where bytes (application/octet-stream) were expected');
  });

  it('refuses a payload over maxBytes before reading the rest of it', async () => {
    let written = 0;
    const { client } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024);
      // Keeps writing until the client hangs up: the client must stop reading at its cap.
      const pump = (): void => {
        while (written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (written < 64 * 1024 * 1024 && !res.destroyed) res.once('drain', pump);
        else res.end();
      };
      res.on('error', () => undefined);
      pump();
    });
    const err = await caught(client.packageArchive(ID, { maxBytes: 1024 * 1024 }));
    expect(err).toMatchObject({ failure: 'bad-response' });
    expect(err.message).toContain('answered more than 1048576 bytes');
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses an id that is not 64 lowercase hex characters without sending anything', async () => {
    const { client, seen } = await serve((_req, res) => octets(res, PAYLOAD));
    for (const bad of [
      '',
      'abc',
      ID.toUpperCase(),
      `${ID}0`,
      '../../v2/users',
      `g${ID.slice(1)}`,
    ]) {
      await expect(client.packageArchive(bad)).rejects.toBeInstanceOf(LedgerUsageError);
    }
    expect(seen).toHaveLength(0);
  });
});

describe('isPackageId', () => {
  it('is true only for 64 lowercase hex characters', () => {
    expect(isPackageId(ID)).toBe(true);
    expect(isPackageId(ID.toUpperCase())).toBe(false);
    expect(isPackageId(ID.slice(1))).toBe(false);
    expect(isPackageId(`${ID} `)).toBe(false);
  });
});
