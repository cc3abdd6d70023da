import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  COMMAND_ID_HASH_CHARS,
  commandIdFor,
  isLedgerString,
  type CommandIdInput,
} from '../../src/rules/command-id.js';
import { evaluate } from '../../src/rules/evaluate.js';
import { RULE_LIMITS, RULE_PATTERNS } from '../../src/rules/rule-language.js';
import { CONTEXT, PARTIES, created, input, rules } from './rule-fixtures.js';

const base: CommandIdInput = {
  ruleId: 'accept-small-invoices',
  revision: 1,
  actAs: ['Payer::1220aaaa', 'Issuer::1220bbbb'],
  triggerKey: { kind: 'event', updateId: '1220abcd', nodeId: 0 },
  actionIndex: 0,
};

const SLOT = '2025-03-03T08:00:00.000Z';
const SLOT_MS = Date.parse(SLOT);

const LEDGER_STRING = /^[A-Za-z0-9#:\-_/ ]{1,255}$/;

describe('commandIdFor', () => {
  it('is lb-<ruleId>-<32 hex chars> and deterministic', () => {
    const id = commandIdFor(base);
    expect(id).toMatch(new RegExp(`^lb-accept-small-invoices-[0-9a-f]{${COMMAND_ID_HASH_CHARS}}$`));
    expect(commandIdFor({ ...base })).toBe(id);
  });

  it('ignores actAs order and repeats', () => {
    const id = commandIdFor(base);
    expect(commandIdFor({ ...base, actAs: ['Issuer::1220bbbb', 'Payer::1220aaaa'] })).toBe(id);
    expect(
      commandIdFor({ ...base, actAs: ['Issuer::1220bbbb', 'Payer::1220aaaa', 'Issuer::1220bbbb'] }),
    ).toBe(id);
    expect(commandIdFor({ ...base, actAs: ['Payer::1220aaaa'] })).not.toBe(id);
  });

  it('changes with revision, trigger key, action index and rule id', () => {
    const id = commandIdFor(base);
    const variants = [
      commandIdFor({ ...base, revision: 2 }),
      commandIdFor({ ...base, actionIndex: 1 }),
      commandIdFor({ ...base, triggerKey: { kind: 'event', updateId: '1220abcd', nodeId: 1 } }),
      commandIdFor({ ...base, triggerKey: { kind: 'event', updateId: '1220abce', nodeId: 0 } }),
      commandIdFor({ ...base, ruleId: 'accept-small-invoice' }),
    ];
    expect(new Set([id, ...variants]).size).toBe(variants.length + 1);
  });

  it('encodes fields unambiguously (no concatenation collisions)', () => {
    const a = commandIdFor({ ...base, actAs: ['a,b', 'c'] });
    const b = commandIdFor({ ...base, actAs: ['a', 'b,c'] });
    expect(a).not.toBe(b);
    const slotA = commandIdFor({
      ...base,
      triggerKey: { kind: 'slot', slot: SLOT_MS, contractId: null },
    });
    const slotB = commandIdFor({
      ...base,
      triggerKey: { kind: 'slot', slot: SLOT_MS, contractId: 'null' },
    });
    expect(slotA).not.toBe(slotB);
    // An event key and a slot key with the same text never collide either.
    const ev = commandIdFor({ ...base, triggerKey: { kind: 'event', updateId: SLOT, nodeId: 1 } });
    const sl = commandIdFor({
      ...base,
      triggerKey: { kind: 'slot', slot: SLOT_MS, contractId: '1' },
    });
    expect(ev).not.toBe(sl);
  });

  it('gives a contract key (pruning recovery) its own ids, distinct from every other key', () => {
    const cid = '00' + 'ab'.repeat(33);
    const key = { kind: 'contract', contractId: cid, nodeId: 0 } as const;
    const contract = commandIdFor({ ...base, triggerKey: key });
    expect(contract).toMatch(/^lb-accept-small-invoices-[0-9a-f]{32}$/);
    // Deterministic: every replica and restart recovering the contract gets the same id.
    expect(commandIdFor({ ...base, triggerKey: { ...key } })).toBe(contract);
    const others = [
      commandIdFor({ ...base, triggerKey: { ...key, contractId: cid + '0' } }),
      // The same text in the other kinds never collides with it.
      commandIdFor({ ...base, triggerKey: { kind: 'slot', slot: 0, contractId: cid } }),
      commandIdFor({ ...base, triggerKey: { kind: 'slot', slot: SLOT_MS, contractId: cid } }),
      commandIdFor({ ...base, triggerKey: { kind: 'event', updateId: cid, nodeId: 0 } }),
      commandIdFor({ ...base, triggerKey: key, actionIndex: 1 }),
      commandIdFor({ ...base, triggerKey: key, revision: 2 }),
    ];
    expect(new Set([contract, ...others]).size).toBe(others.length + 1);
  });

  it('stays a LedgerString of at most 255 chars for the longest allowed rule id', () => {
    const longest = 'a' + '-_9z'.repeat(40).slice(0, RULE_LIMITS.RULE_ID_MAX - 1);
    expect(longest).toHaveLength(RULE_LIMITS.RULE_ID_MAX);
    expect(longest).toMatch(new RegExp(RULE_PATTERNS.RULE_ID));
    const id = commandIdFor({
      ...base,
      ruleId: longest,
      actAs: Array.from({ length: 50 }, (_, i) => `Party${i}::1220${'f'.repeat(64)}`),
      triggerKey: { kind: 'slot', slot: SLOT_MS, contractId: '00'.repeat(100) },
      actionIndex: RULE_LIMITS.ACTIONS_PER_RULE_MAX - 1,
    });
    expect(id.length).toBeLessThanOrEqual(255);
    expect(id).toMatch(LEDGER_STRING);
    expect(isLedgerString(id)).toBe(true);
  });

  it('hashes the JSON array of its inputs (pinned, so an encoding change cannot slip in)', () => {
    const json = (key: unknown[]): string =>
      createHash('sha256')
        .update(
          JSON.stringify([
            'ledgerbot/command-id/v1',
            base.ruleId,
            1,
            ['Issuer::1220bbbb', 'Payer::1220aaaa'],
            key,
            0,
          ]),
        )
        .digest('hex')
        .slice(0, 32);
    expect(commandIdFor(base)).toBe(`lb-accept-small-invoices-${json(['event', '1220abcd', 0])}`);
    // The slot is hashed as ISO-8601 UTC text, as when keys carried it so: the ids of slots
    // journalled by earlier versions stay the same.
    const slot = { kind: 'slot', slot: SLOT_MS, contractId: 'a"b\\c' } as const;
    expect(commandIdFor({ ...base, triggerKey: slot })).toBe(
      `lb-accept-small-invoices-${json(['slot', SLOT, slot.contractId])}`,
    );
    expect(
      commandIdFor({ ...base, triggerKey: { kind: 'slot', slot: SLOT_MS, contractId: null } }),
    ).toBe(`lb-accept-small-invoices-${json(['slot', SLOT, null])}`);
    // A recovered contract's node id is kept by the journal, not hashed.
    for (const nodeId of [0, 3]) {
      expect(
        commandIdFor({ ...base, triggerKey: { kind: 'contract', contractId: 'a"b\\c', nodeId } }),
      ).toBe(`lb-accept-small-invoices-${json(['contract', 'a"b\\c'])}`);
    }
    expect(commandIdFor(base)).toBe('lb-accept-small-invoices-5c02b4b4b963b9313e2cc940e2df5896');
  });

  it('refuses a slot that is not a time in epoch milliseconds', () => {
    for (const slot of [Number.NaN, 1.5, Number.POSITIVE_INFINITY]) {
      expect(() =>
        commandIdFor({ ...base, triggerKey: { kind: 'slot', slot, contractId: null } }),
      ).toThrow(/epoch milliseconds/);
    }
  });

  it('refuses a rule id that would not make a LedgerString', () => {
    expect(() => commandIdFor({ ...base, ruleId: 'accept\u00e9' })).toThrow(/LedgerString/);
    expect(() => commandIdFor({ ...base, ruleId: 'x'.repeat(300) })).toThrow(/255/);
  });
});

describe('commandIds of evaluated rules', () => {
  const ruleText = (when: string, revision: number, payerArg = '${{ parties.payer }}'): string => `
version: 1
rules:
  - id: accept-small-invoices
    revision: ${revision}
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    when: '${when}'
    then:
      - createAndExercise:
          template: "#invoices:Automation:InvoiceAcceptor"
          createArguments: { payer: "${payerArg}" }
          choice: AcceptInvoice
          choiceArgument: { invoice: "\${{ event.contractId }}" }
        actAs: [payer]
`;
  const idOf = (text: string): string => {
    const r = evaluate(rules(text), input({ CreatedEvent: created() }), CONTEXT);
    expect(r.intents).toHaveLength(1);
    return r.intents[0]!.commandId;
  };

  it('does not change when the logic changes, and changes with revision', () => {
    const original = idOf(ruleText('event.createArgument.currency == "USD"', 1));
    const edited = idOf(
      ruleText(
        'decimal(event.createArgument.amount) < decimal("5000")',
        1,
        'x-${{ parties.payer }}',
      ),
    );
    expect(edited).toBe(original);
    expect(idOf(ruleText('event.createArgument.currency == "USD"', 2))).not.toBe(original);
  });

  it('is the same on replay of the same event, and differs for another event', () => {
    const set = rules(ruleText('true', 1));
    const first = evaluate(set, input({ CreatedEvent: created() }), CONTEXT).intents[0]!;
    const replay = evaluate(set, input({ CreatedEvent: created() }), CONTEXT).intents[0]!;
    const other = evaluate(set, input({ CreatedEvent: created({ nodeId: 1 }) }), CONTEXT)
      .intents[0]!;
    expect(replay.commandId).toBe(first.commandId);
    expect(other.commandId).not.toBe(first.commandId);
    expect(first.commandId).toBe(
      commandIdFor({
        ruleId: 'accept-small-invoices',
        revision: 1,
        actAs: [PARTIES.payer],
        triggerKey: first.triggerKey,
        actionIndex: 0,
      }),
    );
  });
});
