/** How the console writes values for people (console/src/format.ts): pure, so tested here. */
import { describe, expect, it } from 'vitest';
import {
  baseName,
  commandLabel,
  errorText,
  fromHash,
  relativeTime,
  shortTemplate,
  tone,
} from '../../console/src/format.js';

const NOW = Date.parse('2026-05-01T12:00:00Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString();

describe('the console formats', () => {
  it('times relative to now, rounded to the unit that reads best', () => {
    expect(relativeTime(ago(2_000), NOW)).toBe('just now');
    expect(relativeTime(ago(12_000), NOW)).toBe('12 s ago');
    expect(relativeTime(ago(3 * 60_000), NOW)).toBe('3 min ago');
    expect(relativeTime(ago(2 * 3600_000), NOW)).toBe('2 h ago');
    expect(relativeTime(ago(3 * 86_400_000), NOW)).toBe('3 d ago');
    expect(relativeTime(ago(-5 * 60_000), NOW)).toBe('in 5 min');
    expect(relativeTime('not a time', NOW)).toBe('not a time');
  });

  it('errors as code and message, whatever shape the journal kept', () => {
    expect(errorText(undefined)).toBe('');
    expect(errorText(null)).toBe('');
    expect(errorText('plain text')).toBe('plain text');
    expect(errorText({ code: 'CONTRACT_NOT_FOUND', cause: 'gone' })).toBe(
      'CONTRACT_NOT_FOUND: gone',
    );
    expect(errorText({ code: 'X', message: 'm', cause: 'c' })).toBe('X: m');
    expect(errorText({ other: 1 })).toBe('{"other":1}');
  });

  it('ids short enough for a table cell', () => {
    expect(commandLabel('lb-audit-invoices-0123456789abcdef0123', 'audit-invoices')).toBe(
      '…0123456789ab…',
    );
    expect(commandLabel('someone-elses-id', 'audit-invoices')).toBe('someone-elses-id');
    expect(shortTemplate('#invoices:Invoice:Invoice')).toBe('Invoice:Invoice');
    expect(shortTemplate('0596cea6:Invoice:Invoice')).toBe('Invoice:Invoice');
    expect(shortTemplate('Plain')).toBe('Plain');
    expect(baseName('/etc/ledgerbot/rules/audit.yaml')).toBe('audit.yaml');
    expect(baseName('C:\\rules\\audit.yaml')).toBe('audit.yaml');
  });

  it('ids from the address, a malformed escape taken as written', () => {
    expect(fromHash('lb-a%2Fb')).toBe('lb-a/b');
    expect(fromHash('100%')).toBe('100%');
  });

  it('states as a colour: done, under way, failed', () => {
    expect(['succeeded', 'duplicate', 'active', 'running'].map(tone)).toEqual(
      Array(4).fill('good'),
    );
    expect(['pending', 'submitted', 'resuming'].map(tone)).toEqual(Array(3).fill('busy'));
    expect(['rejected', 'dead-lettered', 'failed'].map(tone)).toEqual(Array(3).fill('bad'));
    expect(tone('paused')).toBe('off');
  });
});
