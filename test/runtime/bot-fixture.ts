import { FakeClock } from '../../src/core/fake-clock.js';
import type { Logger } from '../../src/core/logger.js';
import { SeededRandom } from '../../src/core/seeded-random.js';
import type { UpdateElement } from '../../src/ledger/ws/update-stream.js';
import type { JsTransaction } from '../../src/ledger/wire/wire-types.js';
import type { RuleSet } from '../../src/rules/compiled-rule.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { createBot, type Bot, type BotOptions } from '../../src/runtime/bot.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';
import { specValidator } from '../support/spec-validator.js';
import { FakeLedger } from './fake-ledger.js';

const openapi = specValidator('openapi-3.5');

export const PAYER = 'payer::1220abcd';
export const ISSUER = 'issuer::1220abcd';
export const PARTIES = { payer: PAYER, issuer: ISSUER };

export const ACCEPT_RULES = `version: 1
rules:
  - id: accept
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: event.createArgument.currency == "USD"
    then:
      - exercise:
          template: '#invoices:Invoice:Invoice'
          contractId: '\${{ event.contractId }}'
          choice: Accept
        actAs: [payer]
    concurrency: 8
`;

/** The accept rule with a condition that fails on every invoice (its currency is no decimal): a rule error. */
export const FAILING_ACCEPT_RULES = `version: 1
rules:
  - id: accept
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when: decimal(event.createArgument.currency) > decimal("1")
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Accept }
        actAs: [payer]
`;

/** A rule entry (append it to a `rules:` list) that acts as the issuer on an exercised Accept. */
export const SETTLE_RULE = `  - id: settle
    on:
      exercised: { template: '#invoices:Invoice:Invoice', choice: Accept }
      party: issuer
    then:
      - exercise: { template: '#invoices:Payment:Payment', contractId: '\${{ event.exerciseResult }}', choice: Settle }
        actAs: [issuer]
`;

/** The accept rule and a `remind` rule (Remind on every invoice the payer sees). */
export const REMIND_RULES = `${ACCEPT_RULES}  - id: remind
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    then:
      - exercise: { template: '#invoices:Invoice:Invoice', contractId: '\${{ event.contractId }}', choice: Remind }
        actAs: [payer]
`;

/** One schedule rule: every minute, the payer creates a Note. */
export const NOTE_RULES = `version: 1
rules:
  - id: note
    schedule: { cron: '* * * * *', timezone: UTC }
    then:
      - create: { template: '#invoices:Invoice:Note', createArguments: { owner: '\${{ parties.payer }}' } }
        actAs: [payer]
`;

/** The choices of the fixture ledger's submissions so far, in order. */
export function choices(fx: BotFixture): string[] {
  return fx.ledger.submits.map((s) => {
    const c = s.commands[0] as { ExerciseCommand?: { choice: string } };
    return c.ExerciseCommand?.choice ?? '?';
  });
}

export function rules(text = ACCEPT_RULES): RuleSet {
  return loadRulesOrThrow([{ path: 'rules.yaml', text }], { parties: PARTIES });
}

/** A spec-valid transaction at `offset` creating one invoice seen by the payer. */
export function invoiceCreated(
  offset: number,
  args: Record<string, unknown> = {},
  template = 'Invoice:Invoice',
): UpdateElement {
  const transaction: JsTransaction = {
    updateId: `upd-${offset}`,
    commandId: '',
    workflowId: '',
    effectiveAt: '2026-01-05T08:59:00Z',
    offset,
    synchronizerId: 'sync::1220ef',
    recordTime: '2026-01-05T08:59:00Z',
    events: [
      {
        CreatedEvent: {
          offset,
          nodeId: 0,
          contractId: `00inv${offset}`,
          templateId: `1220pkg:${template}`,
          createArgument: {
            issuer: ISSUER,
            payer: PAYER,
            amount: '100.00',
            currency: 'USD',
            reference: `INV-${offset}`,
            ...args,
          },
          witnessParties: [PAYER],
          signatories: [ISSUER],
          observers: [PAYER],
          createdAt: '2026-01-05T08:59:00Z',
          packageName: 'invoices',
          representativePackageId: '1220pkg',
          acsDelta: true,
        },
      },
    ],
  };
  openapi.assert('JsTransaction', transaction);
  return { kind: 'transaction', offset, transaction };
}

export function checkpointAt(offset: number): UpdateElement {
  const checkpoint = {
    offset,
    synchronizerTimes: [{ synchronizerId: 'sync::1220ef', recordTime: '2026-01-05T09:00:00Z' }],
  };
  openapi.assert('OffsetCheckpoint1', checkpoint);
  return { kind: 'checkpoint', offset, checkpoint };
}

export type BotFixture = {
  clock: FakeClock;
  ledger: FakeLedger;
  store: Store;
  bot: Bot;
  /** The store's directory. */
  readonly dir: string;
  /** A new bot on the same store directory (a restart). */
  restart(overrides?: Partial<BotOptions>): Bot;
  /** Lets the pipeline run: timers due now and promise callbacks. */
  settle(): Promise<void>;
  cleanup(): Promise<void>;
};

export function botFixture(
  overrides: Partial<BotOptions> = {},
  storeOptions: { readonly groupCommit?: boolean } = {},
): BotFixture {
  const clock = new FakeClock(Date.UTC(2026, 0, 5, 9));
  const ledger = new FakeLedger();
  const temp = tempDir();
  const bots: Bot[] = [];
  const stores: Store[] = [];
  const make = (more: Partial<BotOptions>): Bot => {
    const store = openSqliteStore({ dir: temp.dir, clock, ...storeOptions });
    stores.push(store);
    const bot = createBot({
      rules: rules(),
      parties: PARTIES,
      userId: 'ledgerbot',
      ledger,
      store,
      clock,
      random: new SeededRandom(11 + bots.length),
      submission: { maxInFlight: 16, completionTimeoutMs: 30_000 },
      ...overrides,
      ...more,
    });
    bots.push(bot);
    return bot;
  };
  const bot = make({});
  const fixture: BotFixture = {
    clock,
    ledger,
    get store() {
      return stores[stores.length - 1]!;
    },
    bot,
    dir: temp.dir,
    restart: (more = {}) => make(more),
    settle: async () => {
      for (let i = 0; i < 5; i++) await clock.advance(0);
    },
    cleanup: async () => {
      for (const b of bots) {
        const stopping = b.stop();
        await clock.advance(60_000);
        await stopping;
      }
      for (const s of stores) s.close();
      temp.cleanup();
    },
  };
  return fixture;
}

/** A logger that keeps every line, for asserting what was logged. */
export function recordingLogger(): Logger & {
  lines: { level: string; fields: Record<string, unknown>; msg: string }[];
} {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const make = (bindings: Record<string, unknown>): Logger => {
    const at =
      (level: string) =>
      (fields: Record<string, unknown>, msg: string): void => {
        lines.push({ level, fields: { ...bindings, ...fields }, msg });
      };
    return {
      trace: at('trace'),
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return Object.assign(make({}), { lines });
}
