import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Environment } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { benchRules, memoryRules } from '../../../bench/bench-rules.js';
import { CelDecimal } from '../../../src/rules/cel/cel-decimal.js';
import { CelEnvironment } from '../../../src/rules/cel/cel-environment.js';
import type { CelProgram } from '../../../src/rules/cel/cel-program.js';
import { closureFormOf } from '../../../src/rules/cel/closure-form.js';
import { BAIL, compileClosure } from '../../../src/rules/cel/compile-closure.js';
import { ConversionMemo } from '../../../src/rules/cel/conversion-memo.js';
import { MEMO_KEY } from '../../../src/rules/cel/literal-calls.js';
import { EVERY_ITEM } from '../../../src/rules/cel/read-paths.js';
import {
  checksReject,
  thresholdChecks,
  thresholdFamilyKey,
} from '../../../src/rules/threshold-guards.js';

/**
 * Conditions evaluated by closures (compile-closure.ts) must give exactly what cel-js gives:
 * the same value, or an error with the same message. Every condition of the bench rules, the
 * examples and the rule fixtures, and a list of edge cases, run on many generated events through
 * an environment with closures and one without.
 */

const VARIABLES = ['event', 'contract', 'parties', 'rule', 'now', 'today'];
const PARTIES = {
  issuer: 'Issuer::1220aa',
  payer: 'Payer::1220bb',
  treasury: 'T::1',
  registry: 'R::1',
  alice: 'A::1',
};

function conditionsOf(text: string): string[] {
  const doc = parse(text) as { rules?: { when?: string | string[] }[] } | null;
  return (doc?.rules ?? []).flatMap((r) =>
    r.when === undefined ? [] : Array.isArray(r.when) ? r.when : [r.when],
  );
}

function ruleFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => readFileSync(join(dir, f), 'utf8'));
}

const EDGE_CASES = [
  'event.createArgument.note != null && event.createArgument.note.endsWith("7")',
  'event.createArgument.note == null',
  'null == event.createArgument.note',
  'event.createArgument.currency == event.createArgument.note',
  'event.createArgument.flag == true || !event.createArgument.flag',
  'event.createArgument.currency in ["USD", "EUR"]',
  'event.createArgument.currency in event.createArgument.list',
  'event.createArgument.amount in event.createArgument.list',
  'has(event.createArgument.note) && has(event.createArgument.missing)',
  'event.createArgument.list.size() > 1 && size(event.createArgument.list) < 3',
  'event.createArgument.reference.size() > 2',
  'event.createArgument.reference.matches("^INV-[0-9]+$")',
  'event.createArgument.reference.contains("-0") ? event.offset > 3 : event.nodeId <= 2',
  'event.createArgument.list[0] == "USD" && event.createArgument.list[5] == "x"',
  'event.createArgument["currency"] == "USD"',
  'decimal(event.createArgument.amount) + 1 > decimal("10") - decimal(event.createArgument.amount)',
  'decimal(event.createArgument.amount) * decimal(event.createArgument.amount) >= 100',
  'decimal(event.createArgument.amount) * 2 <= decimal("1999.98")',
  'decimal(event.createArgument.amount) == decimal("1000")',
  'decimal(event.createArgument.amount) != decimal(event.offset)',
  'decimal(event.createArgument.amount) == 1000',
  '1000 < decimal(event.createArgument.amount)',
  'decimal(event.createArgument.count) > 2',
  'event.createArgument.count > 2',
  'event.createArgument.count + 1 > 2',
  'event.offset + event.nodeId > 5',
  'date(event.createArgument.due) < today && date(event.createArgument.due) >= date("2026-01-01")',
  'date(event.createArgument.due) == date("2026-01-11")',
  'event.createdAt < now && event.recordTime >= event.createdAt',
  'event.createArgument.amount < "5"',
  'event.createArgument.currency',
  'event.witnessParties.exists(p, p == parties.issuer)',
  'event.createArgument.payer == parties.payer && rule.id == "r"',
  'event.createArgument.payer == parties.nobody',
  '!(event.createArgument.currency == "CHF") || event.createArgument.amount == "1"',
  'event.createArgument.currency == "USD" && decimal(event.createArgument.amount) > 0',
  'event.missing.field == "x" || true',
  'false && event.missing.field == "x"',
  // The same subexpression shared by rules, and one that differs only in its last character.
  'decimal(event.createArgument.amount) * 2 > decimal("2000")',
  'decimal(event.createArgument.amount) * 3 > decimal("2000")',
  'decimal(event.createArgument.amount) * 2 < decimal("1900")',
];

const corpus = [
  ...conditionsOf(benchRules(100, 'ledger-effects')),
  ...conditionsOf(benchRules(100, 'acs-delta')),
  ...conditionsOf(memoryRules()),
  ...['examples/invoices/rules', 'examples/token-transfers/rules', 'test/fixtures/rules/valid']
    .flatMap(ruleFiles)
    .flatMap(conditionsOf),
  ...EDGE_CASES,
];

/** A small deterministic generator (the test must not depend on Math.random). */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const TEXTS = ['USD', 'EUR', 'CHF', 'GBP', '', 'INV-17', 'INV-007', 'INV-3', 'x7', 'ab'];
const NUMERIC = ['0', '999.99', '1000', '1000.0', '-5', '12.5', ' 12 ', 'abc', '1e5', '3800'];
const DATES = ['2026-01-11', '2026-05-13', '2024-02-29', '2026-13-01', 'soon'];
const PARTY_IDS = Object.values(PARTIES);

function valueFor(field: string, next: () => number): unknown {
  const r = next();
  if (r < 0.06) return null;
  if (r < 0.09) return 7n;
  if (r < 0.11) return 2.5;
  if (r < 0.13) return true;
  if (r < 0.15) return { nested: 'USD' };
  if (r < 0.18) return [TEXTS[Math.floor(next() * TEXTS.length)], 'USD'];
  const pick = (xs: readonly string[]): string => xs[Math.floor(next() * xs.length)]!;
  if (/amount|count/i.test(field)) return pick(NUMERIC);
  if (/due|date/i.test(field)) return pick(DATES);
  if (/payer|issuer|owner|receiver|sender|admin|party/i.test(field)) return pick(PARTY_IDS);
  return pick([...TEXTS, ...NUMERIC.slice(0, 3)]);
}

/** A value with something at every path the programs read (or, now and then, nothing). */
function eventFor(programs: readonly CelProgram[], variable: string, next: () => number): unknown {
  const root: Record<string, unknown> = {
    offset: BigInt(Math.floor(next() * 9)),
    nodeId: BigInt(Math.floor(next() * 4)),
    contractId: `00${Math.floor(next() * 16).toString(16)}`,
    witnessParties: next() < 0.5 ? [PARTIES.issuer] : [PARTIES.payer, PARTIES.issuer],
    actingParties: next() < 0.3 ? [] : [PARTIES.issuer],
    createdAt: new Date(Date.UTC(2026, 0, 1 + Math.floor(next() * 20))),
    recordTime: new Date(Date.UTC(2026, 0, 1 + Math.floor(next() * 20))),
    workflowId: next() < 0.5 ? '' : 'skip',
  };
  for (const program of programs) {
    for (const read of program.reads) {
      if (read.variable !== variable) continue;
      let at: Record<string, unknown> = root;
      const names = read.segments.map((s) => s.name);
      for (let i = 0; i < names.length; i++) {
        const name = names[i]!;
        if (name === EVERY_ITEM) break;
        if (i === names.length - 1) {
          if (!Object.hasOwn(at, name) && next() < 0.92) at[name] = valueFor(name, next);
        } else {
          const child = at[name];
          if (typeof child !== 'object' || child === null || Array.isArray(child)) {
            if (next() < 0.03) break;
            at[name] = {};
          }
          at = at[name] as Record<string, unknown>;
        }
      }
    }
  }
  return root;
}

/** A result to compare: a value rendered, or the error's message. */
function outcome(program: CelProgram, values: Readonly<Record<string, unknown>>): string {
  try {
    const v = program.evaluate(values);
    if (v instanceof CelDecimal) return `decimal ${v.toString()}`;
    if (v instanceof Date) return `date ${v.getTime()}`;
    return `${typeof v} ${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x))}`;
  } catch (error) {
    return `error ${(error as Error).name}: ${(error as Error).message}`;
  }
}

describe('CEL conditions through closures', () => {
  const fast = CelEnvironment.create();
  const slow = CelEnvironment.create({ closures: false });
  const warm = CelEnvironment.create();
  const compiled = [...new Set(corpus)].flatMap((source) => {
    let slowProgram: CelProgram;
    try {
      slowProgram = slow.compile(source, VARIABLES);
    } catch {
      // Not valid CEL (edge cases that do not type-check): nothing to evaluate.
      expect(() => fast.compile(source, VARIABLES)).toThrow();
      return [];
    }
    const program = fast.compile(source, VARIABLES);
    // As a warm start gets it: stored as JSON, restored by another environment without cel-js.
    const stored = JSON.parse(JSON.stringify(fast.stored(program))) as unknown;
    return [{ source, fast: program, restored: warm.restore(stored), slow: slowProgram }];
  });

  it('cover most of the corpus (the rest is left to cel-js)', () => {
    expect(compiled.length).toBeGreaterThan(100);
    expect(compiled.every((c) => c.slow.closure === false)).toBe(true);
    expect(compiled.every((c) => c.restored.closure === c.fast.closure)).toBe(true);
    const covered = compiled.filter((c) => c.fast.closure === true).length;
    expect(covered / compiled.length).toBeGreaterThan(0.85);
    // Macros (exists), durations and doubles are not in the subset.
    expect(compiled.find((c) => c.source.includes('.exists('))?.fast.closure).toBe(false);
  });

  it('give what cel-js gives, value or error, on every generated event', () => {
    const next = generator(16);
    let compared = 0;
    let decided = 0;
    for (let round = 0; round < 300; round++) {
      const programs = compiled.map((c) => c.fast);
      const event = eventFor(programs, 'event', next);
      const contract = eventFor(programs, 'contract', next);
      const now = new Date(Date.UTC(2026, 0, 10, 12));
      const base = {
        event,
        contract,
        parties: PARTIES,
        rule: { id: next() < 0.5 ? 'r' : 'q', revision: 1n, description: '', labels: {} },
        now,
        today: new Date(Date.UTC(2026, 0, 10)),
      };
      // One memo per event, shared by its programs, as evaluate.ts does; and without one.
      const withMemo = { ...base, [MEMO_KEY]: new ConversionMemo() };
      for (const c of compiled) {
        for (const values of [withMemo, base]) {
          const expected = outcome(c.slow, values);
          expect(
            outcome(c.fast, values),
            `${c.source} on ${JSON.stringify(values, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x))}`,
          ).toBe(expected);
          // Restored programs on every fourth event (the test runs long enough as it is).
          if (round % 4 === 0) {
            expect(outcome(c.restored, values), `${c.source}, restored`).toBe(expected);
          }
          compared += 1;
          if (c.fast.closure === true && expected.startsWith('boolean')) decided += 1;
        }
      }
    }
    expect(compared).toBeGreaterThan(50_000);
    expect(decided).toBeGreaterThan(compared / 2);
    // Some 100,000 evaluations: room for a machine busy with the whole suite.
  }, 60_000);

  it('are false in cel-js whenever a threshold of theirs rejects the event (threshold-guards.ts)', () => {
    const withThresholds = compiled.flatMap((c) => {
      const found = c.fast.thresholds!();
      if (found.length === 0) return [];
      // A warm start finds the same thresholds in the stored form.
      const restored = c.restored.thresholds!();
      expect(restored.map(thresholdFamilyKey), c.source).toEqual(found.map(thresholdFamilyKey));
      expect(
        restored.map((t) => t.literal),
        c.source,
      ).toEqual(found.map((t) => t.literal));
      const [checks] = thresholdChecks([
        found.map((threshold) => ({ threshold, family: thresholdFamilyKey(threshold) })),
      ]);
      return [{ ...c, checks: checks! }];
    });
    // The bench's amount windows and doubled amounts, the examples' thresholds, the edge cases.
    expect(withThresholds.length).toBeGreaterThan(20);
    const next = generator(23);
    let rejected = 0;
    let undecided = 0;
    for (let round = 0; round < 300; round++) {
      const event = eventFor(
        withThresholds.map((c) => c.fast),
        'event',
        next,
      ) as Readonly<Record<string, unknown>>;
      const values = {
        event,
        contract: {},
        parties: PARTIES,
        rule: { id: 'r', revision: 1n, description: '', labels: {} },
        now: new Date(Date.UTC(2026, 0, 10, 12)),
        today: new Date(Date.UTC(2026, 0, 10)),
      };
      for (const c of withThresholds) {
        const reads = { values: [], cuts: [], input: { event: undefined } };
        if (checksReject(c.checks, event, reads)) {
          rejected += 1;
          expect(outcome(c.slow, values), c.source).toBe('boolean false');
        } else if (reads.cuts.some((cut) => cut === -1)) undecided += 1;
      }
    }
    expect(rejected).toBeGreaterThan(1_000);
    // Amounts that are no decimal, missing fields, other types: left to the evaluation.
    expect(undecided).toBeGreaterThan(100);
  });
});

describe('compileClosure', () => {
  const env = new Environment({ homogeneousAggregateLiterals: false })
    .registerVariable('event', 'dyn')
    .registerVariable('parties', 'dyn');
  const closureOf = (source: string): ReturnType<typeof compileClosure> => {
    const parsed = env.parse(source);
    parsed.check();
    return compileClosure(closureFormOf(parsed.ast), { memoizeConversions: false });
  };

  it('decides conditions of the subset itself', () => {
    const event = { createArgument: { currency: 'USD', reference: 'INV-17', note: null } };
    const values = { event, parties: PARTIES };
    expect(closureOf('event.createArgument.currency == "USD"')!(values)).toBe(true);
    expect(closureOf('event.createArgument.currency in ["EUR", "CHF"]')!(values)).toBe(false);
    expect(closureOf('event.createArgument.note != null')!(values)).toBe(false);
    expect(closureOf('event.createArgument.reference.endsWith("7") && true')!(values)).toBe(true);
  });

  it('gives BAIL where cel-js has to decide (missing fields, other types)', () => {
    const values = { event: { createArgument: { amount: 5n } }, parties: PARTIES };
    expect(closureOf('event.createArgument.currency == "USD"')!(values)).toBe(BAIL);
    expect(closureOf('event.createArgument.amount == "5"')!(values)).toBe(BAIL);
    expect(closureOf('event.createArgument.amount + 1 > 2')!(values)).toBe(BAIL);
    // false && x is false whatever x gives; true && x needs x.
    expect(closureOf('false && event.createArgument.currency == "USD"')!(values)).toBe(false);
    expect(closureOf('true && event.createArgument.currency == "USD"')!(values)).toBe(BAIL);
  });

  it('is null outside the subset', () => {
    expect(closureOf('event.witnessParties.exists(p, p == "x")')).toBeNull();
    expect(closureOf('event.createArgument.amount > 2.5')).toBeNull();
  });
});
