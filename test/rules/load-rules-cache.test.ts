import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CelEnvironment } from '../../src/rules/cel/cel-environment.js';
import { CelProgramCache } from '../../src/rules/cel-program-cache.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { loadRules, type RuleFile } from '../../src/rules/load-rules.js';
import type { CheckedRuleSource, RuleSourceCache } from '../../src/rules/rule-source-cache.js';
import { INVOICES_WITH_AUDIT } from './invoices-catalogue.js';
import { CONTEXT, created, input, PARTIES } from './rule-fixtures.js';

const VALID = new URL('../fixtures/rules/valid/', import.meta.url);
const OPTIONS = { parties: ['payer', 'issuer'], packages: INVOICES_WITH_AUDIT };

function validFiles(): RuleFile[] {
  return readdirSync(VALID)
    .sort()
    .map((name) => ({ path: name, text: readFileSync(new URL(name, VALID), 'utf8') }));
}

/** A cache in memory that counts what the loader asks of it. */
class MapCache implements RuleSourceCache {
  readonly entries = new Map<string, CheckedRuleSource>();
  hits = 0;
  get(key: string): CheckedRuleSource | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.hits++;
    return entry === undefined ? undefined : structuredClone(entry);
  }
  set(key: string, entry: CheckedRuleSource): void {
    this.entries.set(key, entry);
  }
}

const json = (x: unknown): string => JSON.stringify(x);

// Reading `reference` as an int fails at run time, at the position of the expression.
const RUNTIME_ERROR = `version: 1
rules:
  - id: odd
    on:
      created: "#invoices:Invoice:Invoice"
      party: payer
    when:
      - event.createArgument.currency == "USD"
      - >-
        int(event.createArgument.reference)
        > 1
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ event.contractId }}"
          choice: Accept
        actAs: [payer]
`;

describe('loadRules with a source cache', () => {
  it('gives the same rule set from the cache as from the files, and asks it once per file', () => {
    const fresh = loadRules(validFiles(), OPTIONS);
    expect(fresh.problems).toEqual([]);
    const cache = new MapCache();
    const first = loadRules(validFiles(), { ...OPTIONS, sourceCache: cache });
    expect(cache.entries.size).toBe(validFiles().length);
    expect(cache.hits).toBe(0);
    const second = loadRules(validFiles(), { ...OPTIONS, sourceCache: cache });
    expect(cache.hits).toBe(validFiles().length);
    expect(json(first)).toBe(json(fresh));
    expect(json(second)).toBe(json(fresh));
    expect(second.ruleSet.rules.map((r) => [r.id, r.revision])).toEqual(
      fresh.ruleSet.rules.map((r) => [r.id, r.revision]),
    );
  });

  it('uses what the cache holds instead of parsing (the key is the file, not its meaning)', () => {
    const cache = new MapCache();
    const files = validFiles();
    loadRules(files, { ...OPTIONS, sourceCache: cache });
    for (const entry of cache.entries.values()) {
      const rules = (entry.value as { rules: { id: string }[] }).rules;
      for (const r of rules) r.id = `cached-${r.id}`;
    }
    const { ruleSet } = loadRules(files, { ...OPTIONS, sourceCache: cache });
    expect(ruleSet.rules.every((r) => r.id.startsWith('cached-'))).toBe(true);
    // An edited file is another key: parsed again.
    const edited = files.map((f) => ({ ...f, text: `${f.text}\n` }));
    const again = loadRules(edited, { ...OPTIONS, sourceCache: cache });
    expect(again.ruleSet.rules.some((r) => r.id.startsWith('cached-'))).toBe(false);
  });

  it('reports a later compile error (other packages) at the same file:line:col', () => {
    const file = { path: 'odd.yaml', text: RUNTIME_ERROR.replace('reference', 'referenc') };
    const cache = new MapCache();
    // Without packages the misspelt field is not known to be wrong: the file is cached clean.
    expect(loadRules([file], { parties: PARTIES, sourceCache: cache }).problems).toEqual([]);
    expect(cache.entries.size).toBe(1);
    const fresh = loadRules([file], OPTIONS);
    const cached = loadRules([file], { ...OPTIONS, sourceCache: cache });
    expect(cache.hits).toBe(1);
    expect(fresh.problems.length).toBeGreaterThan(0);
    expect(cached.problems).toEqual(fresh.problems);
  });

  it('a later load of an unchanged file reuses its restored positions; an edited one has its own', () => {
    const file = { path: 'odd.yaml', text: RUNTIME_ERROR.replace('reference', 'referenc') };
    const cache = new MapCache();
    loadRules([file], { parties: PARTIES, sourceCache: cache });
    const fresh = loadRules([file], OPTIONS);
    expect(fresh.problems.length).toBeGreaterThan(0);
    expect(loadRules([file], { ...OPTIONS, sourceCache: cache }).problems).toEqual(fresh.problems);
    expect(loadRules([file], { ...OPTIONS, sourceCache: cache }).problems).toEqual(fresh.problems);
    // Same path, two lines more above: cached as a file of its own, its problems two lines down.
    const edited = { path: file.path, text: `# edited\n# twice\n${file.text}` };
    loadRules([edited], { parties: PARTIES, sourceCache: cache });
    const moved = loadRules([edited], { ...OPTIONS, sourceCache: cache }).problems;
    expect(cache.hits).toBe(3);
    expect(moved).toEqual(loadRules([edited], OPTIONS).problems);
    expect(moved.map((p) => p.line)).toEqual(fresh.problems.map((p) => p.line + 2));
  });

  it("the load after a parsing load takes its positions; another process's cache restores them", () => {
    const file = { path: 'odd.yaml', text: RUNTIME_ERROR.replace('reference', 'referenc') };
    const snapshotsRead = { count: 0 };
    /** Hands out entries whose snapshot counts its reads. */
    class CountingCache extends MapCache {
      override get(key: string): CheckedRuleSource | undefined {
        const entry = super.get(key);
        if (entry === undefined) return undefined;
        return {
          value: entry.value,
          get yaml() {
            snapshotsRead.count += 1;
            return entry.yaml;
          },
        };
      }
    }
    const cache = new CountingCache();
    expect(loadRules([file], { parties: PARTIES, sourceCache: cache }).problems).toEqual([]);
    const fresh = loadRules([file], OPTIONS).problems;
    expect(fresh.length).toBeGreaterThan(0);
    // `run`'s second load at a cold start: the parsed file's positions, not its snapshot.
    expect(loadRules([file], { ...OPTIONS, sourceCache: cache }).problems).toEqual(fresh);
    expect(cache.hits).toBe(1);
    expect(snapshotsRead.count).toBe(0);
    // The next process has the same entries in a cache of its own: restored from the snapshot.
    const next = new CountingCache();
    for (const [key, entry] of cache.entries) next.entries.set(key, entry);
    expect(loadRules([file], { ...OPTIONS, sourceCache: next }).problems).toEqual(fresh);
    expect(snapshotsRead.count).toBe(1);
  });

  it('evaluates the same, run-time errors included, with the same positions', () => {
    const file = { path: 'odd.yaml', text: RUNTIME_ERROR };
    const cache = new MapCache();
    const fresh = loadRules([file], { parties: PARTIES });
    loadRules([file], { parties: PARTIES, sourceCache: cache });
    const cached = loadRules([file], { parties: PARTIES, sourceCache: cache });
    expect(cache.hits).toBe(1);
    const event = input({ CreatedEvent: created() });
    const a = evaluate(fresh.ruleSet, event, CONTEXT);
    const b = evaluate(cached.ruleSet, event, CONTEXT);
    expect(json(a)).toContain('odd.yaml');
    expect(json(b)).toBe(json(a));
  });

  it('does not cache a file with problems, and ignores a malformed entry', () => {
    const cache = new MapCache();
    const bad = { path: 'bad.yaml', text: 'version: 1\nrules: [\n' };
    const badResult = loadRules([bad], { sourceCache: cache });
    expect(badResult.problems.length).toBeGreaterThan(0);
    expect(cache.entries.size).toBe(0);
    const files = validFiles();
    const fresh = loadRules(files, OPTIONS);
    loadRules(files, { ...OPTIONS, sourceCache: cache });
    const broken: CheckedRuleSource[] = [
      { value: 'not a mapping', yaml: { lines: [], root: null } },
      { value: {}, yaml: { lines: 'x', root: null } as never },
      { value: { rules: [] }, yaml: { lines: [0], root: ['s', 0, 1e9, null, 'x', null] } },
      { value: { rules: [] }, yaml: { lines: [0], root: ['z', 0, 0] as never } },
      null as never,
    ];
    for (const entry of broken) {
      // As the next process reads them (this one keeps the positions of the files it parsed).
      const read = new MapCache();
      for (const key of cache.entries.keys()) read.entries.set(key, entry);
      expect(json(loadRules(files, { ...OPTIONS, sourceCache: read }))).toBe(json(fresh));
    }
  });

  it('does not cache a file with a value JSON would change', () => {
    const cache = new MapCache();
    const text = RUNTIME_ERROR.replace('id: odd', 'id: odd\n    labels: { n: .inf }');
    loadRules([{ path: 'inf.yaml', text }], { parties: PARTIES, sourceCache: cache });
    expect(cache.entries.size).toBe(0);
  });
});

describe('loadRules with a CEL program cache', () => {
  /** Every CEL program of a rule set, in order. */
  function programsOf(ruleSet: { rules: readonly unknown[] }): unknown[] {
    const out: unknown[] = [];
    const stack: unknown[] = [...ruleSet.rules].reverse();
    while (stack.length > 0) {
      const x = stack.pop();
      if (typeof x !== 'object' || x === null) continue;
      if ('evaluate' in x && 'source' in x) {
        out.push(x);
        continue;
      }
      stack.push(...Object.values(x as Record<string, unknown>).reverse());
    }
    return out;
  }

  it('gives the next load the programs of the load before, and the same rules', () => {
    const files = validFiles();
    const programs = new CelProgramCache(CelEnvironment.create());
    const fresh = loadRules(files, OPTIONS);
    const first = loadRules(files, { ...OPTIONS, programs });
    // Checked against other packages the second time: the programs do not depend on them.
    const second = loadRules(files, { parties: OPTIONS.parties, programs });
    const third = loadRules(files, { ...OPTIONS, programs });
    expect(json(first)).toBe(json(fresh));
    expect(json(third)).toBe(json(fresh));
    expect(json(second)).toBe(json(loadRules(files, { parties: OPTIONS.parties })));
    const a = programsOf(first.ruleSet);
    expect(a.length).toBeGreaterThan(10);
    expect(programsOf(third.ruleSet)).toEqual(a);
    programsOf(third.ruleSet).forEach((p, i) => expect(p).toBe(a[i]));
  });

  it('compiles an expression once per load: rules with the same text share its program', () => {
    const again = RUNTIME_ERROR.split('rules:\n')[1]!.replace('id: odd', 'id: odd-again');
    const file = { path: 'rules.yaml', text: RUNTIME_ERROR };
    const both = { path: 'rules.yaml', text: `${RUNTIME_ERROR}${again}` };
    const cel = CelEnvironment.create();
    let compiled = 0;
    const compile = cel.compile.bind(cel);
    cel.compile = (...args) => {
      compiled += 1;
      return compile(...args);
    };
    const programs = new CelProgramCache(cel);
    const one = loadRules([file], { parties: PARTIES, programs: new CelProgramCache(cel) });
    const perFile = compiled;
    compiled = 0;
    const shared = loadRules([both], { parties: PARTIES, programs });
    expect(shared.problems).toEqual([]);
    expect(shared.ruleSet.rules).toHaveLength(2 * one.ruleSet.rules.length);
    expect(compiled).toBe(perFile);
    const [first, second] = [programsOf(one.ruleSet), programsOf(shared.ruleSet)];
    expect(second).toHaveLength(2 * first.length);
    second.slice(0, first.length).forEach((p, i) => expect(second[first.length + i]).toBe(p));
    // Each rule evaluates as it does alone (here: the same evaluation error, under its own id).
    const event = input({ CreatedEvent: created() });
    const alone = evaluate(one.ruleSet, event, CONTEXT);
    const together = evaluate(shared.ruleSet, event, CONTEXT);
    expect(alone.errors).toHaveLength(1);
    expect(together.errors.map((e) => e.ruleId)).toEqual(['odd', 'odd-again']);
    expect(json({ ...together.errors[0], pos: undefined })).toBe(
      json({ ...alone.errors[0], pos: undefined }),
    );
  });

  it('compiles an edited expression again, and reports its errors at the same place', () => {
    const programs = new CelProgramCache(CelEnvironment.create());
    const file = { path: 'odd.yaml', text: RUNTIME_ERROR };
    const first = loadRules([file], { parties: PARTIES, programs });
    const edited = { path: 'odd.yaml', text: RUNTIME_ERROR.replace('"USD"', '"EUR" &&') };
    const broken = loadRules([edited], { parties: PARTIES, programs });
    expect(broken.problems).toEqual(loadRules([edited], { parties: PARTIES }).problems);
    expect(broken.problems[0]?.code).toBe('CEL_COMPILE_ERROR');
    const again = loadRules([file], { parties: PARTIES, programs });
    const event = input({ CreatedEvent: created() });
    expect(json(evaluate(again.ruleSet, event, CONTEXT))).toBe(
      json(evaluate(first.ruleSet, event, CONTEXT)),
    );
  });
});
