import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../../src/core/write-file-atomically.js';
import { TestScope } from '../support/test-scope.js';

let scope: TestScope;
beforeEach(() => {
  scope = new TestScope();
});
afterEach(() => scope.close());

describe('writeFileAtomically', () => {
  it('makes the directory, writes, and replaces an older file, leaving no temporary file', () => {
    const dir = join(scope.tempDir(), 'state', 'deeper');
    const file = join(dir, 'f.json');
    writeFileAtomically(file, 'one');
    writeFileAtomically(file, 'two');
    expect(readFileSync(file, 'utf8')).toBe('two');
    expect(readdirSync(dir)).toEqual(['f.json']);
  });

  it("throws the file system's error when the directory cannot be made", () => {
    const blocker = join(scope.tempDir(), 'a-file');
    writeFileSync(blocker, 'x');
    expect(() => writeFileAtomically(join(blocker, 'state', 'f.json'), 'x')).toThrow(/ENOTDIR/);
  });

  it('removes its temporary file when the rename fails', () => {
    const dir = scope.tempDir();
    const target = join(dir, 'target');
    // A directory in the way: the write succeeds, the rename over it does not.
    writeFileAtomically(join(target, 'inside'), 'x');
    expect(() => writeFileAtomically(target, 'y')).toThrow();
    expect(readdirSync(dir)).toEqual(['target']);
  });
});
