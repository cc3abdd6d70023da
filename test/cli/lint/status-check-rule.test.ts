import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import tseslint from 'typescript-eslint';

// The project's own eslint.config.js, without the type-aware rules (they need a TS program and
// say nothing about this syntax ban), so the check stays fast.
const eslint = new ESLint({
  cwd: new URL('../../..', import.meta.url).pathname,
  overrideConfig: [tseslint.configs.disableTypeChecked],
});

async function banned(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

describe('lint: status and gRPC code checks belong in src/ledger', () => {
  const snippet = (check: string): string =>
    `export function f(r: { status: number; grpcCodeValue: number }): boolean {\n  return ${check};\n}\n`;

  it.each([
    'r.status === 404',
    'r.status !== 200',
    '401 === r.status',
    'r.grpcCodeValue === 16',
    'r.grpcCodeValue !== 7',
  ])('fires on `%s` outside src/ledger', async (check) => {
    const messages = await banned(snippet(check), 'src/cli/example.ts');
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/named check/);
  });

  it('lets a named check and non-numeric comparisons pass, and src/ledger compare', async () => {
    expect(
      await banned(
        snippet("r.status === undefined || String(r.status) === 'x'"),
        'src/cli/example.ts',
      ),
    ).toEqual([]);
    expect(await banned(snippet('r.status === 404'), 'src/ledger/example.ts')).toEqual([]);
  });

  it('still applies the base bans in the files it covers', async () => {
    expect(await banned('export enum E { A }\n', 'src/runtime/example.ts')).toEqual([
      'Use a string union instead of enum.',
    ]);
  });
});
