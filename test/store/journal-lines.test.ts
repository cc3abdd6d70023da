import { describe, expect, it } from 'vitest';
import {
  JOURNAL_LINE_LIMITS,
  JournalFormatError,
  journalLines,
} from '../../src/store/journal-lines.js';
import { parseJournalLines } from '../../src/store/read-journal-lines.js';
import type { JournalContents } from '../../src/store/journal-transfer.js';
import type { IntentRecord } from '../../src/store/store.js';
import { eventIntent } from './store-fixtures.js';

const record: IntentRecord = {
  ...eventIntent(5),
  state: 'pending',
  attempts: 0,
  createdAt: 1,
  updatedAt: 1,
};
const journal: JournalContents = {
  checkpoint: 4,
  intents: [{ intent: record, attemptLog: [] }],
  slots: [],
};

describe('journal lines', () => {
  it('read back what they wrote, with the header', () => {
    const bytes = Buffer.from([...journalLines(journal, 0)].join(''));
    const read = parseJournalLines(bytes, 'j.jsonl');
    expect(read.header).toMatchObject({ exportedAt: '1970-01-01T00:00:00.000Z', intents: 1 });
    expect(read.intents).toEqual(journal.intents);
    expect(read.checkpoint).toBe(4);
    expect(read.processedOffset).toBeUndefined();
  });

  it('refuse to export an intent whose line an import would refuse', () => {
    const limits = { ...JOURNAL_LINE_LIMITS, maxLineBytes: 100 };
    expect(() => [...journalLines(journal, 0, limits)]).toThrow(
      /intent lb-rule-5-0 cannot be exported: its line would be longer than 100 bytes/,
    );
    const deep = { ...JOURNAL_LINE_LIMITS, maxDepth: 3 };
    expect(() => [...journalLines(journal, 0, deep)]).toThrow(JournalFormatError);
  });

  it('refuse a file over the size bound before reading a line', () => {
    const bytes = Buffer.from([...journalLines(journal, 0)].join(''));
    const limits = { ...JOURNAL_LINE_LIMITS, maxFileBytes: bytes.length - 1 };
    expect(() => parseJournalLines(bytes, 'j.jsonl', limits)).toThrow(
      `j.jsonl: the file has ${bytes.length} bytes, more than ${bytes.length - 1}`,
    );
  });

  it('refuse bytes that are not UTF-8, naming the line', () => {
    const header = [...journalLines(journal, 0)][0]!;
    const bytes = Buffer.concat([Buffer.from(header), Buffer.from([0xff, 0xfe, 0x0a])]);
    expect(() => parseJournalLines(bytes, 'j.jsonl')).toThrow(/^j\.jsonl:2: not a JSON line/);
  });
});
