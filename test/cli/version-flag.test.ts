import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT_OK, runCli } from '../../src/cli/run-cli.js';

describe('ledgerbot --version', () => {
  it("prints the version of ledgerbot's package.json", async () => {
    const pkg = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    const out: string[] = [];
    const code = await runCli(['--version'], { out: (t) => out.push(t), err: () => undefined });
    expect(code).toBe(EXIT_OK);
    expect(out.join('')).toBe(`${pkg.version}\n`);
  });
});
