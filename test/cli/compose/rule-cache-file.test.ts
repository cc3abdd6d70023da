import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckedRuleSource } from '../../../src/rules/rule-source-cache.js';
import { RULE_CACHE_FILE, RuleCacheFile } from '../../../src/cli/compose/rule-cache-file.js';
import { TestScope } from '../../support/test-scope.js';
import { recordingLogger } from '../../runtime/bot-fixture.js';

let scope: TestScope;
beforeEach(() => {
  scope = new TestScope();
});
afterEach(() => scope.close());

type Log = ReturnType<typeof recordingLogger>;

const ENTRY_A: CheckedRuleSource = {
  value: { version: 1, rules: [{ id: 'a' }] },
  yaml: { lines: [0], root: ['s', 0, 1, 'PLAIN', 'a', null] },
};
const ENTRY_B: CheckedRuleSource = {
  value: { version: 1, rules: [{ id: 'b' }] },
  yaml: { lines: [0], root: null },
};

function open(stateDir: string, log: Log = recordingLogger(), version = '1.2.3'): RuleCacheFile {
  return RuleCacheFile.load({ stateDir, version, logger: log });
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
    const log = recordingLogger();
    const again = open(dir, log);
    expect(again.size).toBe(2);
    expect(again.get('a')).toEqual(ENTRY_A);
    expect(again.get('b')).toEqual(ENTRY_B);
    expect(again.get('c')).toBeUndefined();
    expect(log.lines).toEqual([
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
    const log = recordingLogger();
    const cache = open(dir, log);
    expect(cache.size).toBe(0);
    expect(cache.get('a')).toBeUndefined();
    expect(log.lines).toEqual([
      { level: 'info', fields: { file, why }, msg: 'rule cache ignored; it is rebuilt' },
    ]);
    cache.set('a', ENTRY_A);
    cache.save();
    expect(open(dir).get('a')).toEqual(ENTRY_A);
  });

  it('ignores a file another ledgerbot version wrote', () => {
    const dir = written();
    const log = recordingLogger();
    expect(open(dir, log, '9.9.9').size).toBe(0);
    expect(log.lines[0]?.fields.why).toBe('written by ledgerbot 1.2.3');
  });

  it('says at debug that there is none yet', () => {
    const log = recordingLogger();
    expect(open(join(scope.tempDir(), 'nothing'), log).size).toBe(0);
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([['debug', 'no rule cache']]);
  });

  it('read-only: uses the file, writes nothing', () => {
    const dir = join(scope.tempDir(), 'state');
    const cache = RuleCacheFile.load({
      stateDir: dir,
      version: '1',
      logger: recordingLogger(),
      readOnly: true,
    });
    cache.set('a', ENTRY_A);
    cache.save();
    expect(() => readdirSync(dir)).toThrow();
  });

  it('a cache that cannot be written is a warning, not a failure', () => {
    const blocker = join(scope.tempDir(), 'a-file');
    writeFileSync(blocker, 'x');
    const log = recordingLogger();
    const cache = open(join(blocker, 'state'), log);
    cache.set('a', ENTRY_A);
    expect(() => cache.save()).not.toThrow();
    expect(log.lines.at(-1)?.level).toBe('warn');
    expect(log.lines.at(-1)?.msg).toBe(
      'rule cache not written; the next start reads the rule files again',
    );
  });
});
