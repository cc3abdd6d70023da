/**
 * The console's built page (src/runtime/ops/console/console-assets.ts, `npm run gen:console`):
 * what console/ gives (not stale), whole (every file the page loads is in it, with its type),
 * loadable under the ops server's strict CSP (no inline script or style, no handler attributes)
 * and self-contained (no other site).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { consoleAssets } from '../../src/runtime/ops/console/console-assets.js';

const html = consoleAssets.get('/')?.body ?? '';
const scripts = [...consoleAssets].filter(([path]) => path.endsWith('.js'));

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the console assets', () => {
  it('are what console/ gives (else: npm run gen:console)', () => {
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'scripts/gen-console.ts', '--check'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(`${r.stdout}${r.stderr}`).toBe('');
    expect(r.status).toBe(0);
  }, 60_000);

  it('serve the page at / and every file it names, with its content type', () => {
    expect(consoleAssets.get('/')?.type).toBe('text/html; charset=utf-8');
    const named = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(named).toEqual(
      expect.arrayContaining(['/console/app.js', '/console/console.css', '/console/icon.svg']),
    );
    for (const path of named) expect(consoleAssets.has(path), path).toBe(true);
    expect(consoleAssets.get('/console/app.js')?.type).toBe('text/javascript; charset=utf-8');
    expect(consoleAssets.get('/console/console.css')?.type).toBe('text/css; charset=utf-8');
    expect(consoleAssets.get('/console/icon.svg')?.type).toBe('image/svg+xml');
  });

  it('hold every module a script imports, as JavaScript without types', () => {
    expect(scripts.length).toBeGreaterThan(5);
    for (const [path, asset] of scripts) {
      for (const m of asset.body.matchAll(/\bfrom\s+'(\.\/[^']+)'/g)) {
        const target = new URL(m[1]!, `http://console${path}`).pathname;
        expect(consoleAssets.has(target), `${path} imports ${m[1]}`).toBe(true);
      }
      // Type-only imports are gone, and no TypeScript syntax is left for the browser.
      expect(asset.body, path).not.toMatch(/^import type /m);
      expect(asset.body, path).not.toMatch(/\binterface\s+\w+\s*\{/);
    }
  });

  it('need nothing a strict CSP forbids, and nothing from another site', () => {
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html).not.toMatch(/<style/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    for (const [path, asset] of consoleAssets) {
      // The SVG namespace is a name, not a request.
      const urls = [...asset.body.matchAll(/\b(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi)]
        .map((m) => m[0])
        .filter((u) => !u.endsWith('www.w3.org'));
      expect(urls, path).toEqual([]);
    }
    for (const [path, asset] of scripts) {
      expect(asset.body, path).not.toMatch(/\.innerHTML|\.outerHTML|insertAdjacentHTML|\beval\(/);
    }
  });
});
