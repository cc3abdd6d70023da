import { existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { benchRules } from '../../../bench/bench-rules.js';
import {
  COMPILED_RULES_FILE,
  CompiledRulesFile,
} from '../../../src/cli/compose/compiled-rules-file.js';
import { sha256Hex } from '../../../src/core/sha256-hex.js';
import { CelEnvironment } from '../../../src/rules/cel/cel-environment.js';
import { CelProgramCache } from '../../../src/rules/cel-program-cache.js';
import type { RuleSet } from '../../../src/rules/compiled-rule.js';
import { loadRules } from '../../../src/rules/load-rules.js';
import { TestScope } from '../../support/test-scope.js';
import { recordingLogger } from '../../runtime/bot-fixture.js';

let scope: TestScope;
beforeEach(() => {
  scope = new TestScope();
});
afterEach(() => scope.close());

type Log = ReturnType<typeof recordingLogger>;

const cel = CelEnvironment.create();
const RULES: RuleSet = loadRules([{ path: 'r.yaml', text: benchRules(20, 'ledger-effects') }], {
  parties: { payer: 'P::1', issuer: 'I::1' },
  programs: new CelProgramCache(cel),
}).ruleSet;
const IDS = RULES.rules.map((r) => r.id);

function open(
  stateDir: string,
  log: Log = recordingLogger(),
  more: { version?: string; readOnly?: boolean; writeDelayMs?: number } = {},
): CompiledRulesFile {
  return new CompiledRulesFile({
    stateDir,
    version: more.version ?? '1.2.3',
    logger: log,
    ...(more.readOnly === undefined ? {} : { readOnly: more.readOnly }),
    ...(more.writeDelayMs === undefined ? {} : { writeDelayMs: more.writeDelayMs }),
  });
}

/** A state directory whose file holds RULES for key "k". */
function written(): string {
  const dir = join(scope.tempDir(), 'state'); // not there yet: the write makes it
  open(dir).set('k', RULES, cel);
  return dir;
}

const ignored = (log: Log): unknown[] =>
  log.lines.filter((l) => l.level === 'warn').map((l) => [l.msg, l.fields.why]);

describe('CompiledRulesFile', () => {
  it('keeps a rule set in <state.dir>/compiled-rules.json and gives it back for its key', () => {
    const dir = written();
    expect(readdirSync(dir)).toEqual([COMPILED_RULES_FILE]); // no temporary file left
    const log = recordingLogger();
    const back = open(dir, log).get('k', CelEnvironment.create());
    expect(back?.rules.map((r) => r.id)).toEqual(IDS);
    expect(ignored(log)).toEqual([]);
  });

  it('is not used for other inputs, or by another version, and says nothing of it above debug', () => {
    const dir = written();
    const log = recordingLogger();
    expect(open(dir, log).get('other', cel)).toBeUndefined();
    expect(open(dir, log, { version: '1.2.4' }).get('k', cel)).toBeUndefined();
    expect(log.lines.filter((l) => l.level !== 'debug')).toEqual([]);
  });

  it('writes nothing when read only, and a set of the key it holds not again', () => {
    const dir = join(scope.tempDir(), 'state');
    open(dir, recordingLogger(), { readOnly: true }).set('k', RULES, cel);
    expect(existsSync(dir)).toBe(false);
    const file = open(dir);
    file.set('k', RULES, cel);
    const text = readFileSync(join(dir, COMPILED_RULES_FILE), 'utf8');
    writeFileSync(join(dir, COMPILED_RULES_FILE), `${text} `);
    file.set('k', RULES, cel);
    expect(readFileSync(join(dir, COMPILED_RULES_FILE), 'utf8')).toBe(`${text} `);
  });

  it('with a write delay, writes at flush (or when the delay is over), not at set', () => {
    const dir = join(scope.tempDir(), 'state');
    const file = open(dir, recordingLogger(), { writeDelayMs: 60_000 });
    file.set('k', RULES, cel);
    expect(existsSync(join(dir, COMPILED_RULES_FILE))).toBe(false);
    file.flush();
    expect(
      open(dir)
        .get('k', cel)
        ?.rules.map((r) => r.id),
    ).toEqual(IDS);
    file.flush(); // nothing left to write
  });

  it('ignores a damaged, foreign, malformed or hostile file with a warning; the next set writes it again', () => {
    const dir = written();
    const path = join(dir, COMPILED_RULES_FILE);
    const good = readFileSync(path, 'utf8');
    const nl = good.indexOf('\n');
    const header = JSON.parse(good.slice(0, nl)) as Record<string, unknown>;
    /** A body with a header that matches it: only its contents can refuse it. */
    const signed = (body: string): string =>
      `${JSON.stringify({ ...header, sha256: sha256Hex(body) })}\n${body}`;
    const deep = 300_000;
    const cases: [string, string | (() => void)][] = [
      ['truncated', good.slice(0, nl)],
      ['corrupt header', `{"format"\n${good.slice(nl + 1)}`],
      ['another format (ledgerbot-rule-cache/1)', good.replace('compiled-rules/1', 'rule-cache/1')],
      ['its contents do not match its hash', good.replace('"enabled":true', '"enabled":false')],
      [
        'malformed: ',
        signed('{"format":1,"shared":[],"programs":[],"rules":[{"id":"x"}],"warnings":[]}'),
      ],
      [
        'malformed: ',
        signed(`{"format":1,"shared":[],"programs":${'['.repeat(deep)}${']'.repeat(deep)}}`),
      ],
      ['larger than 67108864 bytes', () => truncateSync(path, 64 * 1024 * 1024 + 1)],
    ];
    for (const [why, content] of cases) {
      if (typeof content === 'string') writeFileSync(path, content);
      else content();
      const log = recordingLogger();
      const file = open(dir, log);
      expect(file.get('k', cel), why).toBeUndefined();
      expect(ignored(log), why).toEqual([
        [
          'compiled rules ignored; the rules are compiled and the file written again',
          expect.stringContaining(why),
        ],
      ]);
      file.set('k', RULES, cel);
      expect(readFileSync(path, 'utf8')).toBe(good);
    }
  });

  it('a set that cannot be written is a warning', () => {
    const parent = scope.tempDir();
    writeFileSync(join(parent, 'state'), 'x'); // the state directory below a file
    const log = recordingLogger();
    open(join(parent, 'state'), log).set('k', RULES, cel);
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'compiled rules not written; the next start compiles the rules',
    ]);
  });
});
