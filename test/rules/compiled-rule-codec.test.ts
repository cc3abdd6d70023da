import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { benchRules } from '../../bench/bench-rules.js';
import { CelEnvironment } from '../../src/rules/cel/cel-environment.js';
import { CelProgramCache } from '../../src/rules/cel-program-cache.js';
import {
  decodeRuleSet,
  encodeRuleSet,
  RuleSetNotCoded,
} from '../../src/rules/compiled-rule-codec.js';
import type { CompiledValue, RuleSet } from '../../src/rules/compiled-rule.js';
import { loadRules, type RuleFile } from '../../src/rules/load-rules.js';
import { INVOICES_WITH_AUDIT } from './invoices-catalogue.js';

const DIR = new URL('../fixtures/rules/valid/', import.meta.url);
const PARTIES = { payer: 'Payer::1', issuer: 'Issuer::1' };

function validFiles(): RuleFile[] {
  return readdirSync(DIR)
    .sort()
    .map((name) => ({ path: name, text: readFileSync(new URL(name, DIR), 'utf8') }));
}

function compile(files: readonly RuleFile[], cel = CelEnvironment.create()): RuleSet {
  const { ruleSet, problems } = loadRules(files, {
    parties: PARTIES,
    packages: INVOICES_WITH_AUDIT,
    programs: new CelProgramCache(cel),
  });
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  return ruleSet;
}

/** The set as JSON, each program as what it is made of (its text and facts). */
function shape(ruleSet: RuleSet): string {
  return JSON.stringify(ruleSet, (key, v: unknown) => {
    if (v instanceof Map) return { map: [...(v as Map<unknown, unknown>)] };
    if (key !== 'program' && key !== 'groupBy') return v;
    if (key === 'groupBy' && v === null) return v;
    const p = (key === 'program' ? v : (v as { program: unknown }).program) as Record<
      string,
      unknown
    >;
    return [p.source, p.reads, p.numberOperands, p.comparisons, p.guards, p.equalities, p.result];
  });
}

function roundTrip(ruleSet: RuleSet, cel: CelEnvironment): RuleSet {
  return decodeRuleSet(encodeRuleSet(ruleSet, cel), CelEnvironment.create());
}

const EVENT = {
  contractId: '00ab',
  templateId: 'pkg:Invoice:Invoice',
  createArgument: {
    issuer: PARTIES.issuer,
    payer: PARTIES.payer,
    amount: '120.50',
    currency: 'USD',
    reference: 'INV-17',
    due: '2026-01-15',
    note: null,
  },
};

describe('compiled rule sets as text', () => {
  it('give back the same rules (renderings, schedules, batches included), frozen', () => {
    const cel = CelEnvironment.create();
    const ruleSet = compile(validFiles(), cel);
    const text = encodeRuleSet(ruleSet, cel);
    // Repeated parts (template references, options, …) are written once.
    expect(text).toContain('{"$s":');
    const back = decodeRuleSet(text, CelEnvironment.create());
    expect(shape(back)).toBe(shape(ruleSet));
    expect(Object.isFrozen(back.rules[0]!.trigger)).toBe(true);
    expect(Object.isFrozen(back.rules[0]!.then)).toBe(true);
    // A program shared by rules stays one program.
    const programs = back.rules.flatMap((r) => r.when.map((c) => c.program));
    expect(new Set(programs).size).toBe(new Set(programs.map((p) => p.source)).size);
  });

  it('whose conditions and values evaluate as the compiled ones do', () => {
    const cel = CelEnvironment.create();
    const files = [{ path: 'bench.yaml', text: benchRules(40, 'ledger-effects') }];
    const ruleSet = compile(files, cel);
    const back = roundTrip(ruleSet, cel);
    const values = {
      event: EVENT,
      parties: PARTIES,
      rule: {},
      now: new Date(0),
      today: new Date(0),
    };
    const outcome = (run: () => unknown): string => {
      try {
        return JSON.stringify(run());
      } catch (error) {
        return `error ${(error as Error).message}`;
      }
    };
    const valueOf = (v: CompiledValue): unknown =>
      v.kind === 'expression' ? v.expression.program.evaluate(values) : v.kind;
    ruleSet.rules.forEach((rule, i) => {
      const other = back.rules[i]!;
      rule.when.forEach((c, j) => {
        expect(
          outcome(() => other.when[j]!.program.evaluate(values)),
          c.source,
        ).toBe(outcome(() => c.program.evaluate(values)));
      });
      const action = rule.then[0]!;
      if (action.kind === 'exercise') {
        const restored = other.then[0] as typeof action;
        expect(outcome(() => valueOf(restored.contractId))).toBe(
          outcome(() => valueOf(action.contractId)),
        );
      }
    });
  });

  it('keep values whose keys look like tags, and never set a prototype from one', () => {
    const cel = CelEnvironment.create();
    const text = `version: 1
rules:
  - id: odd-keys
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ event.contractId }}'
          choice: Remind
          choiceArgument: { note: { $p: 0, "$m": [1], "__proto__": { polluted: true } } }
        actAs: [payer]
`;
    const ruleSet = loadRules([{ path: 'odd.yaml', text }], {
      parties: PARTIES,
      programs: new CelProgramCache(cel),
    }).ruleSet;
    expect(ruleSet.rules).toHaveLength(1);
    const back = roundTrip(ruleSet, cel);
    expect(shape(back)).toBe(shape(ruleSet));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const note = JSON.stringify(back.rules[0]!.then[0]);
    expect(note).toContain('"$p":"0"');
    expect(note).toContain('"__proto__":{"polluted":true}');
  });

  it('refuse a set with a value JSON cannot write', () => {
    const cel = CelEnvironment.create();
    const ruleSet = compile(validFiles(), cel);
    const rule = { ...ruleSet.rules[0]!, revision: Number.POSITIVE_INFINITY };
    expect(() => encodeRuleSet({ ...ruleSet, rules: [rule] }, cel)).toThrow(RuleSetNotCoded);
    // A program another environment made cannot be written either.
    expect(() => encodeRuleSet(ruleSet, CelEnvironment.create())).toThrow(RuleSetNotCoded);
  });

  it('refuse text that is not such a set: damaged, foreign, malformed or hostile', () => {
    const cel = CelEnvironment.create();
    const text = encodeRuleSet(compile(validFiles(), cel), cel);
    const json = JSON.parse(text) as {
      programs: Record<string, unknown>[];
      rules: Record<string, unknown>[];
    };
    const edited = (edit: (j: typeof json) => void): string => {
      const copy = JSON.parse(text) as typeof json;
      edit(copy);
      return JSON.stringify(copy);
    };
    const deep = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;
    const bad = [
      text.slice(0, text.length - 10),
      '{}',
      'null',
      text.replace('"format":1', '"format":2'),
      edited((j) => (j.rules[0]!.trigger = { kind: 'created' })),
      edited((j) => (j.rules[0]!.then = [])),
      edited((j) => delete j.rules[0]!.options),
      edited((j) => ((j.rules[0]!.when as unknown[])[0] = { $p: 99_999 })),
      edited((j) => (j.rules[0]!.labels = { $q: [] })),
      edited((j) => (j.programs[0]!.reads = 'everything')),
      edited((j) => (j.programs[0]!.equalities = [{ variable: 'event', fields: [1] }])),
      edited((j) => (j.rules[0]!.description = JSON.parse(deep(1_000)) as unknown)),
      `{"format":1,"shared":[],"programs":[],"rules":${deep(200_000)},"warnings":[]}`,
      edited((j) => (j.rules[0]!.labels = { $s: 1e9 })),
      // Shared subtrees that each hold the one before twice: 2^60 values once expanded.
      `{"format":1,"shared":[[],${Array.from({ length: 60 }, (_, i) => `[{"$s":${i}},{"$s":${i}}]`).join(',')}],"programs":[],"rules":[],"warnings":[{"$s":60}]}`,
      `{"format":1,"shared":[{"$s":0}],"programs":[],"rules":[{"$s":0}],"warnings":[]}`,
    ];
    for (const b of bad) {
      expect(() => decodeRuleSet(b, CelEnvironment.create()), b.slice(0, 80)).toThrow(
        RuleSetNotCoded,
      );
    }
  });

  it('restore a closure form that does not decode as a program cel-js evaluates', () => {
    const cel = CelEnvironment.create();
    const files = [{ path: 'bench.yaml', text: benchRules(10, 'ledger-effects') }];
    const text = encodeRuleSet(compile(files, cel), cel);
    const json = JSON.parse(text) as { programs: Record<string, unknown>[] };
    for (const p of json.programs) if (p.closure !== null) p.closure = { op: 7 };
    const back = decodeRuleSet(JSON.stringify(json), CelEnvironment.create());
    const when = back.rules[0]!.when[0]!;
    expect(when.program.evaluate({ event: EVENT, parties: PARTIES })).toBe(
      when.source.includes('"USD"'),
    );
  });
});
