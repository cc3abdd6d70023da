import { describe, expect, it } from 'vitest';
import { renderReliability, type ChaosResult } from '../../bench/chaos-report.js';
import { SMOKE_PLAN } from '../../bench/chaos-plan.js';
import type { RuleOwnership } from '../../bench/chaos-fleet.js';
import type { StoreVerdict } from '../../bench/chaos-verdict.js';

// CI relies on `npm run chaos -- --smoke` exiting non-zero on a correctness failure: these pin
// which measurements count as one.
const states = {
  pending: 0,
  submitted: 0,
  succeeded: 500,
  duplicate: 0,
  rejected: 0,
  'dead-lettered': 5,
};

function store(over: Partial<StoreVerdict> = {}): StoreVerdict {
  return {
    replica: 'a',
    checkpoint: 900,
    states,
    intents: 505,
    deadLetters: 5,
    open: [],
    wrongEnd: [],
    doubleIntents: [],
    rejectedButCommitted: [],
    missingDeadLetters: [],
    ...over,
  };
}

function result(over: Partial<ChaosResult> = {}): ChaosResult {
  const counters = {
    reconnectsUpdates: 3,
    reconnectsCompletions: 3,
    reloadsApplied: 2,
    reloadsRejected: 0,
    submissions: 600,
    recorded: 505,
    retries: 90,
    succeeded: 500,
    duplicate: 0,
    deadLettered: 5,
    earlierCommits: 12,
    warnings: 10,
    errors: 0,
  };
  return {
    plan: SMOKE_PLAN,
    seed: 1,
    command: 'npm run chaos -- --smoke',
    dir: '/tmp/x',
    total: 505,
    settled: true,
    driveSeconds: 12,
    drainSeconds: 1,
    totalSeconds: 30,
    timeline: [{ t: 8, what: 'SIGKILL replica a (restart in 700 ms)' }],
    driver: { outcomes: new Map([['OK', 170]]), commands: 170, retries: 0 },
    faults: {
      submitErrors: { SEQUENCER_BACKPRESSURE: 30 },
      completionErrors: {},
      lostSubmitResponses: 20,
      droppedCompletions: 20,
      delayedSubmissions: 500,
      delayedRequests: 900,
      droppedStreams: 12,
      refusedStreams: 0,
      streamErrors: {},
    },
    bots: [
      {
        name: 'a',
        processes: 2,
        counters,
        unexpectedExits: [],
        stopCode: 0,
        rulesAtEnd: ['chaos-effect', 'chaos-unrelated'],
      },
    ],
    ledger: {
      invoices: 505,
      lastInvoiceOffset: 700,
      duplicateInvoices: [],
      effects: 500,
      closed: 500,
      unclosed: [],
      duplicates: [],
      missing: [],
      unexpected: [],
    },
    stores: [store()],
    badInput: { cases: [], ledgerEndBefore: 900, ledgerEndAfter: 900 },
    badInputFailures: [],
    ...over,
  };
}

describe('renderReliability: the checks that fail a chaos run', () => {
  it('passes a run with every effect once and every intent terminal', () => {
    const { text, failures } = renderReliability(result());
    expect(failures).toEqual([]);
    expect(text).toContain('**Every check passed.**');
  });

  it('fails on a duplicate, a missing effect, an open intent or a wrong dead letter', () => {
    const cases: Partial<ChaosResult>[] = [
      { ledger: { ...result().ledger, effects: 501, duplicates: ['CH-7'] } },
      { ledger: { ...result().ledger, effects: 499, missing: ['CH-9'] } },
      { stores: [store({ open: ['CH-3 lb-x submitted'] })] },
      { stores: [store({ wrongEnd: ['CH-4 lb-y dead-lettered'] })] },
      // A consuming Close that committed, then was refused on a resubmission and settled rejected.
      { stores: [store({ rejectedButCommitted: ['CH-5 lb-z chaos-close'] })] },
      { ledger: { ...result().ledger, closed: 499, unclosed: ['CH-6'] } },
      { bots: [{ ...result().bots[0]!, unexpectedExits: ['bot-a-2 exited by itself'] }] },
      { settled: false },
      { badInputFailures: ['rules: x.yaml: exit code 0, not 2'] },
    ];
    for (const c of cases) {
      const { text, failures } = renderReliability(result(c));
      expect(failures.length, JSON.stringify(c)).toBeGreaterThan(0);
      expect(text).toContain('**FAIL**');
    }
  });

  it('with --store postgres, fails unless the server crashed and each replica stopped on it with a store error', () => {
    const pg = (over: Partial<ChaosResult>): ChaosResult =>
      result({
        store: 'postgres',
        storeCrash: { downMs: 1500, replicas: [{ name: 'a', stopped: true }] },
        bots: [
          {
            ...result().bots[0]!,
            processes: 3,
            outageExits: [
              { process: 'bot-a-2', code: 1, signal: null, storeError: 'STORE_COMMIT_FAILED' },
            ],
          },
        ],
        ...over,
      });
    expect(renderReliability(pg({})).failures).toEqual([]);
    expect(renderReliability(pg({})).text).toContain('PostgreSQL server crashed');
    const cases: Partial<ChaosResult>[] = [
      // The run never reached the crash.
      { storeCrash: null },
      // A replica that went on running without its store's server.
      { storeCrash: { downMs: 1500, replicas: [{ name: 'a', stopped: false }] } },
      // Stopped, but not on a store error, or with another exit code.
      {
        bots: [
          {
            ...result().bots[0]!,
            outageExits: [{ process: 'bot-a-2', code: 1, signal: null, storeError: undefined }],
          },
        ],
      },
      {
        bots: [
          {
            ...result().bots[0]!,
            outageExits: [
              {
                process: 'bot-a-2',
                code: null,
                signal: 'SIGSEGV',
                storeError: 'STORE_OPEN_FAILED',
              },
            ],
          },
        ],
      },
    ];
    for (const c of cases) {
      const { failures } = renderReliability(pg(c));
      expect(failures.length, JSON.stringify(c)).toBeGreaterThan(0);
    }
  });

  it('with --fleet, fails unless the paused member was fenced and each rule has one live runner holding its lease', () => {
    const owned = (ruleId: string, runner: string): RuleOwnership => ({
      ruleId,
      runners: [runner],
      leaseOwner: runner,
    });
    const fleet = (over: Partial<NonNullable<ChaosResult['fleet']>>): ChaosResult =>
      result({
        store: 'postgres',
        stores: [store({ replica: 'fleet' })],
        fleet: {
          members: 3,
          leasePeriodMs: 3000,
          pause: { replica: 'a', pausedMs: 7500, rules: ['chaos-effect'], fenced: true },
          ownership: [owned('chaos-effect', 'c'), owned('chaos-close', 'b')],
          ...over,
        },
      });
    expect(renderReliability(fleet({})).failures).toEqual([]);
    const cases: Partial<NonNullable<ChaosResult['fleet']>>[] = [
      { pause: null },
      { pause: { replica: 'a', pausedMs: 7500, rules: ['chaos-effect'], fenced: false } },
      // Two live members running one rule, nobody running another, a lease held by a dead one.
      { ownership: [{ ruleId: 'chaos-effect', runners: ['a', 'c'], leaseOwner: 'c' }] },
      { ownership: [{ ruleId: 'chaos-close', runners: [], leaseOwner: 'none' }] },
      { ownership: [{ ruleId: 'chaos-close', runners: ['b'], leaseOwner: 'not live' }] },
    ];
    for (const c of cases) {
      const { failures } = renderReliability(fleet(c));
      expect(failures.length, JSON.stringify(c)).toBeGreaterThan(0);
    }
    // The shared journal must hold every designed dead letter.
    const missing = result({
      store: 'postgres',
      stores: [store({ replica: 'fleet', missingDeadLetters: ['CH-1'] })],
      fleet: {
        members: 3,
        leasePeriodMs: 3000,
        pause: { replica: 'a', pausedMs: 7500, rules: [], fenced: true },
        ownership: [],
      },
    });
    expect(renderReliability(missing).failures.length).toBeGreaterThan(0);
  });
});
