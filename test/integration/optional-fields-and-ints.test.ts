import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventFormat } from '../../src/ledger/filters.js';
import { LedgerClient } from '../../src/ledger/ledger-client.js';
import type { CreatedEvent } from '../../src/ledger/wire/wire-types.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import { createBot, type Bot } from '../../src/runtime/bot.js';
import { loadModel } from '../../src/sandbox/model/load-model.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { openSqliteStore } from '../../src/store/open-sqlite-store.js';
import { TestScope } from '../support/test-scope.js';
import { waitFor } from '../support/wait-for.js';

/**
 * End to end, as on Canton 3.5: the participant leaves a trailing None field out of the
 * createArgument it sends, and reads Int64 only from a JSON string. Rules that test the field
 * with `== null` / `!= null` fire as they should, and a command with an Int computed by CEL and
 * one written as a YAML number is accepted.
 */

const MODEL = `
package: { name: optionals, version: 1.0.0 }
templates:
  Item:Item:
    fields:
      owner: Party
      count: Int
      note: Optional Text
    signatories: [owner]
  Item:Tally:
    fields:
      owner: Party
      next: Int
      fixed: Int
      label: Text
    signatories: [owner]
`;

const RULES = `
version: 1
rules:
  - id: tally-items-without-note
    on: { created: "#optionals:Item:Item", party: owner }
    when: event.createArgument.note == null
    then:
      - create:
          template: "#optionals:Item:Tally"
          createArguments:
            owner: "\${{ parties.owner }}"
            next: "\${{ int(event.createArgument.count) + 1 }}"
            fixed: 7
            label: none
        actAs: [owner]
  - id: tally-items-with-note
    on: { created: "#optionals:Item:Item", party: owner }
    when: event.createArgument.note != null
    then:
      - create:
          template: "#optionals:Item:Tally"
          createArguments:
            owner: "\${{ parties.owner }}"
            next: "\${{ int(event.createArgument.count) * 10 }}"
            fixed: 9223372036854775807
            label: "\${{ event.createArgument.note }}"
        actAs: [owner]
`;

// One sandbox for both tests; the scope stops it, the bot and the client, and removes the state.
const scope = new TestScope();
let client: LedgerClient;
let stateDir: string;
let owner: string;

beforeAll(async () => {
  const sandbox: Sandbox = scope.own(
    await startSandbox({
      models: [loadModel(MODEL, 'optionals.yaml')],
      parties: ['Owner'],
      users: ['ledgerbot:Owner'],
      seed: 11,
      limits: { checkpointIntervalMs: 100, listWaitMs: 100 },
    }),
  );
  owner = sandbox.parties.Owner!;
  client = scope.own(await LedgerClient.create({ url: sandbox.url }));
  stateDir = scope.tempDir('ledgerbot-optionals-');
});

afterAll(() => scope.close());

async function createItem(id: string, createArguments: Record<string, unknown>): Promise<void> {
  await client.submitAndWait({
    commands: [{ CreateCommand: { templateId: '#optionals:Item:Item', createArguments } }],
    commandId: `test-create-${id}`,
    actAs: [owner],
    userId: 'ledgerbot',
  });
}

async function active(template: string): Promise<CreatedEvent[]> {
  const end = await client.ledgerEnd();
  const out: CreatedEvent[] = [];
  for await (const entry of client.activeContracts(
    {
      activeAtOffset: end,
      eventFormat: eventFormat({ parties: [owner], templates: [template] }),
    },
    { mode: 'list' },
  )) {
    if (entry.contractEntry !== undefined && 'JsActiveContract' in entry.contractEntry) {
      out.push(entry.contractEntry.JsActiveContract.createdEvent);
    }
  }
  return out;
}

describe('a trailing None left out, Int64 sent as text (Canton 3.5 behaviour)', () => {
  it('fires == null and != null rules correctly, and the sandbox accepts their Int fields', async () => {
    const parties = { owner };
    const bot: Bot = createBot({
      rules: loadRulesOrThrow([{ path: 'optionals.yaml', text: RULES }], { parties }),
      parties,
      userId: 'ledgerbot',
      ledger: client,
      store: openSqliteStore({ dir: stateDir }),
      submission: { maxInFlight: 4, completionTimeoutMs: 5_000 },
      streamBackoff: { initialMs: 50, maxMs: 500 },
      stopGraceMs: 2_000,
    });
    scope.own(bot);
    await bot.start();
    await createItem('plain', { owner, count: '4', note: null });
    await createItem('noted', { owner, count: '5', note: 'hello' });

    // The wire event really lacks the field: without that, the rule would pass on any sandbox.
    const items = await active('#optionals:Item:Item');
    const plain = items.find((e) => (e.createArgument as { count: string }).count === '4');
    expect(plain?.createArgument).toEqual({ owner, count: '4' });
    expect(Object.hasOwn(plain!.createArgument as object, 'note')).toBe(false);

    await waitFor(
      () => active('#optionals:Item:Tally'),
      (t) => t.length === 2,
      10_000,
      'two tallies',
    );
    await waitFor(
      () => bot.metrics.inFlight,
      (n) => n === 0,
      10_000,
      'no command in flight',
    );
    const tallies = (await active('#optionals:Item:Tally'))
      .map((e) => e.createArgument as Record<string, unknown>)
      .sort((a, b) => String(a.label).localeCompare(String(b.label)));
    expect(tallies).toEqual([
      { owner, next: '50', fixed: '9223372036854775807', label: 'hello' },
      { owner, next: '5', fixed: '7', label: 'none' },
    ]);
    const transitions = bot.metrics.snapshot().intentTransitions;
    expect(transitions.rejected).toBe(0);
    expect(transitions['dead-lettered']).toBe(0);
  });

  it('the participant refuses an Int64 sent as a JSON number (what the rules no longer send)', async () => {
    await expect(
      client.submitAndWait({
        commands: [
          {
            CreateCommand: {
              templateId: '#optionals:Item:Tally',
              createArguments: { owner, next: 1, fixed: '1', label: 'number' },
            },
          },
        ],
        commandId: 'test-int-as-number',
        actAs: [owner],
        userId: 'ledgerbot',
      }),
    ).rejects.toThrow();
  });
});
