import type { Handler } from './route-table.js';
import type { SandboxContext } from './sandbox-context.js';
import { SandboxApiError } from './sandbox-api-error.js';

/** Daml-LF's `PackageId` string: ASCII letters, digits, `-`, `_` and space, at most 64. */
const ALLOWED = /^[A-Za-z0-9\-_ ]$/;
const MAX_LENGTH = 64;

/**
 * The package id of a request path, checked as the package service does
 * (`Ref.PackageId.fromString`): a bad one is INVALID_ARGUMENT with Daml-LF's own words.
 */
function packageId(raw: string | undefined): string {
  const id = raw ?? '';
  let problem: string | null = null;
  if (id.length === 0) problem = 'Daml-LF Package ID is empty';
  else if (id.length > MAX_LENGTH) problem = `Daml-LF Package ID is too long (max: ${MAX_LENGTH})`;
  else {
    const bad = [...id].find((c) => !ALLOWED.test(c));
    if (bad !== undefined) {
      problem = `non expected character 0x${bad.codePointAt(0)!.toString(16)} in Daml-LF Package ID "${id}"`;
    }
  }
  if (problem !== null) {
    throw new SandboxApiError(
      'INVALID_ARGUMENT',
      `The submitted request has invalid arguments: Invalid package id: ${problem}`,
    );
  }
  return id;
}

/**
 * The package service (`JsPackageService`, `ApiPackageService`): the ids of every package the
 * sandbox has (its DARs' and its models' own), an archive's `ArchivePayload` bytes as Canton
 * sends them (the bytes whose sha256 is the id, with the id in `Canton-Package-Hash`), and a
 * package's status.
 */
export function packageRoutes(s: SandboxContext): Record<string, Handler> {
  return {
    'GET /v2/packages': () => ({
      status: 200,
      json: JSON.stringify({ packageIds: [...s.archives.keys()] }),
    }),
    'GET /v2/packages/{package-id}': (ctx) => {
      const id = packageId(ctx.params['package-id']);
      const payload = s.archives.get(id);
      if (payload === undefined) {
        throw new SandboxApiError('PACKAGE_NOT_FOUND', 'Could not find package.', {
          resources: [['PACKAGE', id]],
        });
      }
      return { status: 200, bytes: payload, headers: { 'canton-package-hash': id } };
    },
    'GET /v2/packages/{package-id}/status': (ctx) => {
      const id = packageId(ctx.params['package-id']);
      return {
        status: 200,
        json: JSON.stringify({
          packageStatus: s.archives.has(id)
            ? 'PACKAGE_STATUS_REGISTERED'
            : 'PACKAGE_STATUS_UNSPECIFIED',
        }),
      };
    },
  };
}
