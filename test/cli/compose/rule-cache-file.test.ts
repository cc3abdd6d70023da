import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/core/logger.js';
import type { CheckedRuleSource } from '../../../src/rules/rule-source-cache.js';
import { RULE_CACHE_FILE, RuleCacheFile } from '../../../src/cli/compose/rule-cache-file.js';
import { TestScope } from '../../support/test-scope.js';

let scope: TestScope;
beforeEach(() => {
  scope = new TestScope();
});
afterEach(() => scope.close());

type Line = { level: string; fields: Record<string, unknown>; msg: string };

function recorder(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, msg: string): void => {
      lines.push({ level, fields, msg });
    };
  const logger: Logger = {
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

const ENTRY_A: CheckedRuleSource = {
  value: { version: 1, rules: [{ id: 'a' }] },
  yaml: { lines: [0], root: ['s', 0, 1, 'PLAIN', 'a', null] },
};
const ENTRY_B: CheckedRuleSource = {
  value: { version: 1, rules: [{ id: 'b' }] },
  yaml: { lines: [0], root: null },
};

function open(stateDir: string, lines: Line[] = [], version = '1.2.3'): RuleCacheFile {
  return RuleCacheFile.load({ stateDir, version, logger: recorder(lines) });
}

/** A state directory whose cache file holds A and B. */
function written(): string {
  const dir = join(scope.tempDir(), 'state'); // not there yet: save creates it
  const cache = open(dir);
  cache.set('a', ENTRY_A);
  cache.set('b', ENTRY_B);
  cache.save();
  return dir;
}

describe('RuleCacheFile', () => {
  it('keeps entries in <state.dir>/rule-cache.json and reads them back', () => {
    const dir = written();
    expect(readdirSync(dir)).toEqual([RULE_CACHE_FILE]); // no temporary file left
    const lines: Line[] = [];
    const again = open(dir, lines);
    expect(again.size).toBe(2);
    expect(again.get('a')).toEqual(ENTRY_A);
    expect(again.get('b')).toEqual(ENTRY_B);
    expect(again.get('c')).toBeUndefined();
    expect(lines).toEqual([
      {
        level: 'debug',
        fields: { file: join(dir, RULE_CACHE_FILE), files: 2 },
        msg: 'rule cache read',
      },
    ]);
  });

  it('hands a load its own copy: what one load does to an entry, the next does not see', () => {
    const cache = open(written());
    const first = cache.get('a')!;
    (first.value as { rules: { id: string }[] }).rules[0]!.id = 'changed';
    expect(cache.get('a')).toEqual(ENTRY_A);
  });

  it('keeps only what the last load used, and writes only when that changed', () => {
    const dir = written();
    const cache = open(dir);
    cache.get('a');
    cache.get('b');
    const file = join(dir, RULE_CACHE_FILE);
    const bytes = readFileSync(file, 'utf8');
    writeFileSync(file, 'marker');
    cache.save(); // both used, both on disk: nothing written
    expect(readFileSync(file, 'utf8')).toBe('marker');
    writeFileSync(file, bytes);
    cache.get('a');
    cache.save();
    expect(open(dir).get('b')).toBeUndefined();
    expect(open(dir).get('a')).toEqual(ENTRY_A);
    expect(cache.size).toBe(1);
  });

  it.each([
    [
      'truncated',
      (t: string) => t.slice(0, Math.floor(t.length / 2)),
      'its contents do not match its hash',
    ],
    ['cut inside the header', (t: string) => t.slice(0, 10), 'truncated'],
    ['corrupt', () => 'not json\n{', 'corrupt header'],
    ['tampered', (t: string) => t.replace('"a"', '"x"'), 'its contents do not match its hash'],
    [
      'another format',
      (t: string) => t.replace('ledgerbot-rule-cache/1', 'x/9'),
      'another format (x/9)',
    ],
  ])('ignores a %s file (logged, not trusted) and rebuilds it', (_, damage, why) => {
    const dir = written();
    const file = join(dir, RULE_CACHE_FILE);
    writeFileSync(file, damage(readFileSync(file, 'utf8')));
    const lines: Line[] = [];
    const cache = open(dir, lines);
    expect(cache.size).toBe(0);
    expect(cache.get('a')).toBeUndefined();
    expect(lines).toEqual([
      { level: 'info', fields: { file, why }, msg: 'rule cache ignored; it is rebuilt' },
    ]);
    cache.set('a', ENTRY_A);
    cache.save();
    expect(open(dir).get('a')).toEqual(ENTRY_A);
  });

  it('ignores a file another ledgerbot version wrote', () => {
    const dir = written();
    const lines: Line[] = [];
    expect(open(dir, lines, '9.9.9').size).toBe(0);
    expect(lines[0]?.fields.why).toBe('written by ledgerbot 1.2.3');
  });

  it('says at debug that there is none yet', () => {
    const lines: Line[] = [];
    expect(open(join(scope.tempDir(), 'nothing'), lines).size).toBe(0);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([['debug', 'no rule cache']]);
  });

  it('read-only: uses the file, writes nothing', () => {
    const dir = join(scope.tempDir(), 'state');
    const cache = RuleCacheFile.load({
      stateDir: dir,
      version: '1',
      logger: recorder([]),
      readOnly: true,
    });
    cache.set('a', ENTRY_A);
    cache.save();
    expect(() => readdirSync(dir)).toThrow();
  });

  it('a cache that cannot be written is a warning, not a failure', () => {
    const blocker = join(scope.tempDir(), 'a-file');
    writeFileSync(blocker, 'x');
    const lines: Line[] = [];
    const cache = open(join(blocker, 'state'), lines);
    cache.set('a', ENTRY_A);
    expect(() => cache.save()).not.toThrow();
    expect(lines.at(-1)?.level).toBe('warn');
    expect(lines.at(-1)?.msg).toBe(
      'rule cache not written; the next start reads the rule files again',
    );
  });
});
