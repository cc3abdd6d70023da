import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchRuleFiles } from '../../src/cli/rule-reloader.js';
import { silentLogger } from '../../src/core/logger.js';

let dir: string | undefined;
let stop: (() => void) | undefined;

afterEach(() => {
  stop?.();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, ms: number): Promise<void> {
  for (let waited = 0; !check() && waited < ms; waited += 20) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('watchRuleFiles', () => {
  it('calls back once for a burst of writes in a watched directory', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerbot-watch-'));
    let calls = 0;
    stop = watchRuleFiles([dir], () => (calls += 1), silentLogger, 100);
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, 'rules.yaml'), `version: 1 # ${i}\n`);
    await until(() => calls > 0, 3_000);
    await new Promise((r) => setTimeout(r, 250));
    expect(calls).toBe(1);
  });

  it('watches a single file through its directory, ignoring its neighbours', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerbot-watch-'));
    const file = join(dir, 'rules.yaml');
    writeFileSync(file, 'version: 1\n');
    let calls = 0;
    stop = watchRuleFiles([file], () => (calls += 1), silentLogger, 50);
    writeFileSync(join(dir, 'other.txt'), 'x');
    await new Promise((r) => setTimeout(r, 200));
    expect(calls).toBe(0);
    writeFileSync(file, 'version: 1\nrules: []\n');
    await until(() => calls > 0, 3_000);
    expect(calls).toBe(1);
  });
});
