import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Decimal } from 'decimal.js';
import { Engine, type RuleProperties } from 'json-rules-engine';
import type { CreatedEvent } from '../src/ledger/wire/wire-types.js';
import { evaluate, type EventInput } from '../src/rules/evaluate.js';
import { loadRules } from '../src/rules/load-rules.js';
import { indexRules } from '../src/rules/rule-index.js';
import {
  benchDocPath,
  benchSection,
  commandLine,
  machineLine,
  writeSection,
} from './bench-support.js';

/**
 * Rules throughput: events per second through `evaluate` (as the bot calls it: `countMatch`, no
 * explanations) with 1, 100 and 1,000 rules, and the
 * same conditions as json-rules-engine rules, in the same process, as a ratio.
 *
 * Workload, the same for both engines: rule i watches created contracts of template `T<i>`
 * for the party `payer`, and fires when `currency == "USD"` and the Numeric `amount` (text,
 * as on the wire) is below 1000, compared as decimals. Events are CreatedEvents of the first
 * ten templates (or the only one), half of them firing: each event concerns one rule, the
 * others are unrelated, as in a bot with many rules over many templates. ledgerbot also renders
 * the command and its commandId (a sha256) for each firing; json-rules-engine only reports its
 * event. One process, one thread: one core.
 */
export type RulesBenchRow = {
  readonly rules: number;
  readonly ledgerbotPerSecond: number;
  readonly baselinePerSecond: number;
  readonly ratio: number;
  readonly fired: number;
};

const PARTIES = { payer: 'Payer::1220aaaa', issuer: 'Issuer::1220bbbb' };
const PKG = 'a'.repeat(64);

function ruleText(count: number): string {
  const rules = Array.from(
    { length: count },
    (_, i) => `  - id: accept-${i}
    on: { created: "#bench:Invoice:T${i}", party: payer }
    when: 'event.createArgument.currency == "USD" && decimal(event.createArgument.amount) < decimal("1000")'
    then:
      - createAndExercise:
          template: "#bench:Automation:Acceptor"
          createArguments: { payer: "\${{ parties.payer }}" }
          choice: Accept
          choiceArgument: { invoice: "\${{ event.contractId }}" }
        actAs: [payer]
`,
  );
  return `version: 1\nrules:\n${rules.join('')}`;
}

function baselineRules(count: number): RuleProperties[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `accept-${i}`,
    conditions: {
      all: [
        { fact: 'qualifiedName', operator: 'equal', value: `Invoice:T${i}` },
        { fact: 'packageName', operator: 'equal', value: 'bench' },
        { fact: 'witnessParties', operator: 'contains', value: PARTIES.payer },
        { fact: 'createArgument', path: '$.currency', operator: 'equal', value: 'USD' },
        { fact: 'createArgument', path: '$.amount', operator: 'decimalLessThan', value: '1000' },
      ],
    },
    event: { type: 'accept', params: { rule: `accept-${i}` } },
  }));
}

function events(templates: number, count: number): EventInput[] {
  return Array.from({ length: count }, (_, j) => {
    const event: CreatedEvent = {
      offset: j + 1,
      nodeId: 0,
      contractId: `00${j.toString(16).padStart(64, '0')}`,
      templateId: `${PKG}:Invoice:T${j % templates}`,
      createArgument: {
        issuer: PARTIES.issuer,
        payer: PARTIES.payer,
        amount: j % 2 === 0 ? '999.99' : '1500.00',
        currency: 'USD',
        reference: `INV-${j}`,
      },
      witnessParties: [PARTIES.payer],
      signatories: [PARTIES.issuer],
      observers: [PARTIES.payer],
      createdAt: '2025-03-03T08:00:00Z',
      packageName: 'bench',
      representativePackageId: PKG,
      acsDelta: true,
    };
    return {
      transaction: {
        updateId: `1220${j.toString(16).padStart(60, '0')}`,
        offset: j + 1,
        recordTime: '2025-03-03T08:00:00Z',
        effectiveAt: '2025-03-03T08:00:00Z',
        workflowId: '',
      },
      event: { CreatedEvent: event },
    };
  });
}

/** Runs `step` until `maxMs` passes or `maxCount` steps ran; returns steps per second. */
function measureSync(maxMs: number, maxCount: number, step: (i: number) => void): number {
  const started = performance.now();
  let n = 0;
  while (n < maxCount && performance.now() - started < maxMs) {
    // Check the clock every 64 steps: reading it costs as much as a cheap step.
    for (let k = 0; k < 64 && n < maxCount; k++, n++) step(n);
  }
  return n / ((performance.now() - started) / 1000);
}

/** measureSync for asynchronous steps, awaited one after the other. */
async function measure(
  maxMs: number,
  maxCount: number,
  step: (i: number) => Promise<void>,
): Promise<number> {
  const started = performance.now();
  let n = 0;
  while (n < maxCount && performance.now() - started < maxMs) {
    for (let k = 0; k < 64 && n < maxCount; k++, n++) await step(n);
  }
  return n / ((performance.now() - started) / 1000);
}

export async function runRulesBench(options: {
  readonly maxMs: number;
  readonly sizes?: readonly number[];
}): Promise<RulesBenchRow[]> {
  const rows: RulesBenchRow[] = [];
  const now = new Date('2025-03-03T09:00:00Z');
  for (const size of options.sizes ?? [1, 100, 1000]) {
    const { ruleSet, problems } = loadRules([{ path: 'bench.yaml', text: ruleText(size) }], {
      parties: PARTIES,
    });
    if (problems.some((p) => p.severity === 'error')) {
      throw new Error(`bench rules do not load: ${JSON.stringify(problems[0])}`);
    }
    const index = indexRules(ruleSet);
    const inputs = events(Math.min(size, 10), 4096);
    const context = { parties: PARTIES, now };
    let fired = 0;
    // As the bot evaluates (evaluateUpdate): the matches counted, no explanation per rule.
    let matched = 0;
    const counting = { countMatch: (): void => void (matched += 1) };
    // Warm up the JIT before measuring.
    for (let i = 0; i < 20_000; i++) evaluate(index, inputs[i % inputs.length]!, context, counting);
    const ledgerbotPerSecond = measureSync(options.maxMs, 5_000_000, (i) => {
      fired += evaluate(index, inputs[i % inputs.length]!, context, counting).intents.length;
    });
    if (matched === 0) throw new Error('rules bench: no rule matched');

    const engine = new Engine(baselineRules(size), { allowUndefinedFacts: true });
    engine.addOperator('decimalLessThan', (a: unknown, b: unknown) => {
      if (typeof a !== 'string' || typeof b !== 'string') return false;
      return new Decimal(a).lessThan(new Decimal(b));
    });
    const facts = inputs.map(({ event }) => {
      const e = (event as { CreatedEvent: CreatedEvent }).CreatedEvent;
      return {
        qualifiedName: e.templateId.slice(e.templateId.indexOf(':') + 1),
        packageName: e.packageName,
        witnessParties: e.witnessParties,
        createArgument: e.createArgument,
      };
    });
    for (let i = 0; i < 200; i++) await engine.run(facts[i % facts.length]);
    const baselinePerSecond = await measure(options.maxMs, 1_000_000, async (i) => {
      await engine.run(facts[i % facts.length]);
    });
    rows.push({
      rules: size,
      ledgerbotPerSecond,
      baselinePerSecond,
      ratio: ledgerbotPerSecond / baselinePerSecond,
      fired,
    });
  }
  return rows;
}

export function rulesSection(rows: readonly RulesBenchRow[]): string {
  const at100 = rows.find((r) => r.rules === 100);
  const verdict =
    at100 === undefined
      ? ''
      : `Targets at 100 rules (issue 16): ≥ 250,000 events/s (${Math.round(at100.ledgerbotPerSecond).toLocaleString('en-US')}: ${at100.ledgerbotPerSecond >= 250_000 ? 'met' : '**NOT met**'}), ≥ 500× json-rules-engine (${at100.ratio.toFixed(0)}×: ${at100.ratio >= 500 ? 'met' : '**NOT met**'}).`;
  return benchSection('rules', [
    '## Rules',
    '',
    `${machineLine()} load average ${(loadavg()[0] ?? 0).toFixed(2)} at the end. One thread.`,
    'Events per second through `evaluate` as the bot calls it (matches counted, no explanation per rule) and',
    '`engine.run` (json-rules-engine 7) with the same rules:',
    'rule i watches created contracts of template `T<i>` for the party `payer` and fires when `currency == "USD"` and the',
    'Numeric `amount` (text) is below 1000, compared as decimals. Events are CreatedEvents of the first ten templates, half',
    'of them firing; the other rules are unrelated. ledgerbot also renders each command and its commandId (sha256).',
    commandLine('rules', '`bench/rules-bench.ts`'),
    '',
    '| rules | ledgerbot events/s | json-rules-engine events/s | ratio |',
    '|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.rules} | ${Math.round(r.ledgerbotPerSecond).toLocaleString('en-US')} | ${Math.round(r.baselinePerSecond).toLocaleString('en-US')} | ${r.ratio.toFixed(0)}× |`,
    ),
    '',
    verdict,
  ]);
}

/** The rules section of `npm run bench`; also runnable alone: `npx tsx bench/rules-bench.ts`. */
export async function runRulesSection(sizes?: readonly number[]): Promise<void> {
  const maxMs = Number(process.env.BENCH_RULES_SECONDS ?? '3') * 1000;
  const rows = await runRulesBench({ maxMs, ...(sizes === undefined ? {} : { sizes }) });
  for (const r of rows) {
    console.log(
      `rules ${r.rules}: ledgerbot ${Math.round(r.ledgerbotPerSecond)}/s, json-rules-engine ${Math.round(r.baselinePerSecond)}/s, ${r.ratio.toFixed(1)}×`,
    );
  }
  writeSection('rules', rulesSection(rows));
  console.log(`wrote the rules section of ${benchDocPath()}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runRulesSection();
}
