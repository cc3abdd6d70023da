import type { ConsoleAsset } from './console/console-assets.js';
import { notFound, type Route } from './ops-http.js';

/**
 * What the console's files may do in a browser: load only themselves (no inline script, no
 * other site), and never be framed.
 */
export const CONSOLE_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * The console's page and files (`GET /`, `GET /console/…`): static, with no data in them, so
 * they need no token. The generated module is imported on the first request, not at start.
 */
export function consoleRoutes(): Route[] {
  let assets: Promise<ReadonlyMap<string, ConsoleAsset>> | undefined;
  const serve: Route['handle'] = async (_params, url) => {
    assets ??= import('./console/console-assets.js').then((m) => m.consoleAssets);
    const asset = (await assets).get(url.pathname);
    if (asset === undefined) throw notFound(`no console file ${url.pathname}`);
    return {
      status: 200,
      body: asset.body,
      type: 'asset',
      contentType: asset.type,
      headers: {
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
        'content-security-policy': CONSOLE_CSP,
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
      },
    };
  };
  return [
    { method: 'GET', pattern: /^\/$/, auth: false, handle: serve },
    { method: 'GET', pattern: /^\/console\/[^/]+$/, auth: false, handle: serve },
  ];
}
