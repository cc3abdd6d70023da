import { describe, expect, it } from 'vitest';
import type { Intent } from '../../src/rules/evaluation-result.js';
import {
  runSlot,
  type SlotContract,
  type SlotJournal,
  type SlotSnapshotSource,
  type SlotSubmitContext,
} from '../../src/schedule/run-slot.js';
import { ScheduleError } from '../../src/schedule/schedule-error.js';
import { specValidator } from '../support/spec-validator.js';
import { PARTIES, created, rules } from '../rules/rule-fixtures.js';

const spec = specValidator('openapi-3.5');

const set = rules(`
version: 1
rules:
  - id: remind-overdue
    schedule: { cron: "0 9 * * MON-FRI", timezone: Europe/Zurich }
    forEach: { activeContracts: "#invoices:Invoice:Invoice", party: issuer }
    when: 'date(contract.createArgument.due) < today'
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ contract.contractId }}"
          choice: Remind
          choiceArgument: { note: "due \${{ contract.createArgument.due }}" }
        actAs: [issuer]
  - id: heartbeat
    schedule: { cron: "*/5 * * * * *" }
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments: { at: "\${{ now }}", by: "\${{ parties.auditor }}" }
        actAs: [auditor]
  - id: by-stranger
    schedule: { cron: "0 0 * * *" }
    forEach: { activeContracts: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise:
          template: "#invoices:Invoice:Invoice"
          contractId: "\${{ contract.contractId }}"
          choice: Remind
        actAs: [payer]
`);
const remind = set.rules[0]!;
const heartbeat = set.rules[1]!;
const byStranger = set.rules[2]!;
const SLOT = Date.parse('2026-01-05T08:00:00Z');

function invoices(n: number, overdue: (i: number) => boolean): SlotContract[] {
  return Array.from({ length: n }, (_, i) =>
    created({
      contractId: '00' + i.toString(16).padStart(64, '0'),
      witnessParties: [PARTIES.issuer],
      createArgument: {
        issuer: PARTIES.issuer,
        payer: PARTIES.payer,
        amount: '10.00',
        currency: 'USD',
        due: overdue(i) ? '2026-01-01' : '2026-02-01',
        reference: `INV-${i}`,
      },
    }),
  );
}

class FakeSource implements SlotSnapshotSource {
  ledgerEndCalls = 0;
  queries: { offset: number; party: string; template: string; refKind: string }[] = [];
  constructor(
    readonly end: number,
    readonly contracts: readonly SlotContract[],
  ) {}
  ledgerEnd(): Promise<number> {
    this.ledgerEndCalls++;
    return Promise.resolve(this.end);
  }
  async *activeContracts(query: Parameters<SlotSnapshotSource['activeContracts']>[0]) {
    this.queries.push({ ...query, template: query.template.text });
    for (const c of this.contracts) {
      await Promise.resolve();
      yield c;
    }
  }
}

class RecordingSink {
  batches: { intents: readonly Intent[]; context: SlotSubmitContext }[] = [];
  fail = false;
  submitIntents(intents: readonly Intent[], context: SlotSubmitContext): Promise<void> {
    if (this.fail) return Promise.reject(new Error('journal is full'));
    this.batches.push({ intents, context });
    return Promise.resolve();
  }
  get intents(): Intent[] {
    return this.batches.flatMap((b) => b.intents);
  }
}

class MemoryJournal implements SlotJournal {
  records = new Map<
    string,
    { lastCompletedSlot?: number; inProgressSlot?: number; snapshotOffset?: number }
  >();
  log: string[] = [];
  getSlotRecord(ruleId: string) {
    return this.records.get(ruleId);
  }
  beginSlot(ruleId: string, slot: number, snapshotOffset?: number) {
    this.log.push(`begin ${ruleId} ${slot} ${snapshotOffset}`);
    const r = this.records.get(ruleId) ?? {};
    this.records.set(ruleId, {
      ...r,
      inProgressSlot: slot,
      ...(snapshotOffset === undefined ? {} : { snapshotOffset }),
    });
  }
  completeSlot(ruleId: string, slot: number) {
    this.log.push(`complete ${ruleId} ${slot}`);
    const r = this.records.get(ruleId) ?? {};
    this.records.set(ruleId, { lastCompletedSlot: Math.max(r.lastCompletedSlot ?? slot, slot) });
  }
}

describe('runSlot', () => {
  it('reads the snapshot at the ledger end, fires per matching contract, in bounded batches', async () => {
    const source = new FakeSource(
      500,
      invoices(250, (i) => i % 2 === 0),
    );
    const sink = new RecordingSink();
    const journal = new MemoryJournal();
    const result = await runSlot(remind, SLOT, {
      source,
      sink,
      journal,
      parties: PARTIES,
      batchSize: 40,
    });
    expect(result).toMatchObject({
      ruleId: 'remind-overdue',
      slot: SLOT,
      snapshotOffset: 500,
      resumed: false,
      contracts: 250,
      intents: 125,
      errorCount: 0,
    });
    expect(source.queries).toEqual([
      {
        offset: 500,
        party: PARTIES.issuer,
        template: '#invoices:Invoice:Invoice',
        refKind: 'template',
      },
    ]);
    expect(sink.batches.map((b) => b.intents.length)).toEqual([40, 40, 40, 5]);
    expect(sink.batches[0]!.context).toEqual({
      ruleId: 'remind-overdue',
      slot: SLOT,
      snapshotOffset: 500,
    });
    const intents = sink.intents;
    expect(new Set(intents.map((i) => i.commandId)).size).toBe(125);
    expect(new Set(intents.map((i) => i.offset))).toEqual(new Set([500]));
    for (const i of intents) {
      expect(i.triggerKey).toMatchObject({
        kind: 'slot',
        slot: Date.parse('2026-01-05T08:00:00.000Z'),
      });
      spec.assert('Command', i.command);
    }
    expect(journal.log).toEqual([
      `begin remind-overdue ${SLOT} 500`,
      `complete remind-overdue ${SLOT}`,
    ]);
  });

  it('a second run of the slot makes the same commandIds (the journal and dedup drop them)', async () => {
    const contracts = invoices(20, () => true);
    const first = new RecordingSink();
    const second = new RecordingSink();
    await runSlot(remind, SLOT, {
      source: new FakeSource(10, contracts),
      sink: first,
      parties: PARTIES,
    });
    await runSlot(remind, SLOT, {
      source: new FakeSource(11, contracts),
      sink: second,
      parties: PARTIES,
    });
    expect(second.intents.map((i) => i.commandId)).toEqual(first.intents.map((i) => i.commandId));
    // Another slot time: other ids.
    const next = new RecordingSink();
    await runSlot(remind, SLOT + 86_400_000, {
      source: new FakeSource(12, contracts),
      sink: next,
      parties: PARTIES,
    });
    const ids = new Set(first.intents.map((i) => i.commandId));
    expect(next.intents.some((i) => ids.has(i.commandId))).toBe(false);
  });

  it('an interrupted slot resumes at its recorded snapshot offset, not a new ledger end', async () => {
    const journal = new MemoryJournal();
    journal.records.set('remind-overdue', { inProgressSlot: SLOT, snapshotOffset: 321 });
    const source = new FakeSource(
      999,
      invoices(3, () => true),
    );
    const sink = new RecordingSink();
    const result = await runSlot(remind, SLOT, { source, sink, journal, parties: PARTIES });
    expect(result).toMatchObject({ snapshotOffset: 321, resumed: true, intents: 3 });
    expect(source.ledgerEndCalls).toBe(0);
    expect(source.queries[0]!.offset).toBe(321);
    expect(sink.intents.every((i) => i.offset === 321)).toBe(true);
    // A different slot in progress does not lend its offset.
    journal.records.set('remind-overdue', { inProgressSlot: SLOT - 1000, snapshotOffset: 321 });
    const again = await runSlot(remind, SLOT, { source, sink, journal, parties: PARTIES });
    expect(again).toMatchObject({ snapshotOffset: 999, resumed: false });
  });

  it('without forEach the rule fires once per slot, with now = the slot time', async () => {
    const source = new FakeSource(7, []);
    const sink = new RecordingSink();
    const result = await runSlot(heartbeat, SLOT + 5000, { source, sink, parties: PARTIES });
    expect(result).toMatchObject({ contracts: 0, intents: 1, snapshotOffset: 7 });
    expect(source.queries).toEqual([]);
    expect(sink.intents[0]!.command).toEqual({
      CreateCommand: {
        templateId: '#invoices:Audit:Entry',
        createArguments: { at: '2026-01-05T08:00:05.000Z', by: PARTIES.auditor },
      },
    });
    expect(sink.intents[0]!.triggerKey).toEqual({
      kind: 'slot',
      slot: Date.parse('2026-01-05T08:00:05.000Z'),
      contractId: null,
    });
  });

  it('a failing sink leaves the slot in progress (not completed)', async () => {
    const journal = new MemoryJournal();
    const sink = new RecordingSink();
    sink.fail = true;
    await expect(
      runSlot(remind, SLOT, {
        source: new FakeSource(
          5,
          invoices(3, () => true),
        ),
        sink,
        journal,
        parties: PARTIES,
      }),
    ).rejects.toThrow('journal is full');
    expect(journal.log).toEqual([`begin remind-overdue ${SLOT} 5`]);
    expect(journal.records.get('remind-overdue')).toEqual({
      inProgressSlot: SLOT,
      snapshotOffset: 5,
    });
  });

  it('contracts the rule fails on are counted, the others still fire', async () => {
    const contracts = invoices(4, () => true);
    const broken = created({
      ...contracts[0]!,
      contractId: '00' + 'f'.repeat(64),
      createArgument: { reference: 'no due date' },
    });
    const sink = new RecordingSink();
    const result = await runSlot(remind, SLOT, {
      source: new FakeSource(5, [...contracts, broken]),
      sink,
      parties: PARTIES,
    });
    expect(result.intents).toBe(4);
    expect(result.errorCount).toBe(1);
    expect(result.errors[0]).toMatchObject({ ruleId: 'remind-overdue', phase: 'when' });
  });

  it('forEach.batch: batches of the selected contracts span the stream; the end fires the rest', async () => {
    const batched = rules(`
version: 1
rules:
  - id: remind-in-batches
    schedule: { cron: "0 9 * * MON-FRI" }
    forEach:
      activeContracts: "#invoices:Invoice:Invoice"
      party: issuer
      batch: { size: 7, min: 2 }
    when: 'date(contract.createArgument.due) < today'
    then:
      - create:
          template: "#invoices:Audit:Entry"
          createArguments:
            by: "\${{ parties.issuer }}"
            invoices: "\${{ contracts.map(c, c.contractId) }}"
        actAs: [issuer]
`).rules[0]!;
    // 45 contracts, 30 overdue: batches of 7, 7, 7, 7 and a last one of 2.
    const contracts = invoices(45, (i) => i % 3 !== 0);
    const overdue = contracts.filter((_, i) => i % 3 !== 0).map((c) => c.contractId);
    const sink = new RecordingSink();
    const journal = new MemoryJournal();
    const result = await runSlot(batched, SLOT, {
      source: new FakeSource(60, contracts),
      sink,
      journal,
      parties: PARTIES,
      batchSize: 2,
    });
    expect(result).toMatchObject({ contracts: 45, intents: 5, errorCount: 0 });
    const lists = sink.intents.map(
      (i) =>
        (i.command as { CreateCommand: { createArguments: { invoices: string[] } } }).CreateCommand
          .createArguments.invoices,
    );
    expect(lists.map((l) => l.length)).toEqual([7, 7, 7, 7, 2]);
    expect(lists.flat()).toEqual(overdue);
    expect(sink.intents.map((i) => i.triggerKey)).toEqual(
      lists.map((l) => ({ kind: 'slot', slot: SLOT, contractId: l[0] })),
    );
    expect(journal.log.at(-1)).toBe(`complete remind-in-batches ${SLOT}`);

    // The slot again at the same snapshot (a resumed run): the same batches, the same ids.
    const again = new RecordingSink();
    await runSlot(batched, SLOT, {
      source: new FakeSource(60, contracts),
      sink: again,
      parties: PARTIES,
    });
    expect(again.intents.map((i) => i.commandId)).toEqual(sink.intents.map((i) => i.commandId));
  });

  it('refuses event rules and unknown parties with typed errors', async () => {
    const event = rules(`
version: 1
rules:
  - id: on-invoice
    on: { created: "#invoices:Invoice:Invoice", party: payer }
    then:
      - exercise: { template: "#invoices:Invoice:Invoice", contractId: "\${{ event.contractId }}", choice: Accept }
        actAs: [payer]
`).rules[0]!;
    const options = { source: new FakeSource(1, []), sink: new RecordingSink(), parties: PARTIES };
    await expect(runSlot(event, SLOT, options)).rejects.toMatchObject({
      code: 'NOT_A_SCHEDULE_RULE',
    });
    const { payer: _payer, ...withoutPayer } = PARTIES;
    await expect(
      runSlot(byStranger, SLOT, { ...options, parties: withoutPayer }),
    ).rejects.toBeInstanceOf(ScheduleError);
  });
});
