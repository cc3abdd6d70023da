import { describe, expect, it } from 'vitest';
import { keepBlocks, spliceBlock, summaryBlock } from '../../bench/reliability-blocks.js';

describe('docs/reliability.md blocks', () => {
  it('a run splices its summary in place, appends it the first time, and the SQLite rewrite keeps it', () => {
    const sqlite = '# Reliability\n\nthe SQLite record\n';
    const withFleet = spliceBlock(sqlite, 'fleet', '## A fleet\n\nfirst');
    expect(withFleet).toBe(
      '# Reliability\n\nthe SQLite record\n\n<!-- chaos:fleet:start -->\n## A fleet\n\nfirst\n<!-- chaos:fleet:end -->\n',
    );
    const both = spliceBlock(withFleet, 'postgres', 'pg');
    const again = spliceBlock(both, 'fleet', '## A fleet\n\nsecond');
    expect(again).toContain('second');
    expect(again).not.toContain('first');
    expect(again.indexOf('chaos:fleet:start')).toBeLessThan(again.indexOf('chaos:postgres:start'));
    const rewritten = keepBlocks(again, '# Reliability\n\na new SQLite record\n');
    expect(rewritten).toContain('a new SQLite record');
    expect(rewritten).not.toContain('the SQLite record\n');
    expect(rewritten).toContain('second');
    expect(rewritten).toContain('<!-- chaos:postgres:start -->\npg\n<!-- chaos:postgres:end -->');
  });

  it('the summary names the verdict, the command and the whole record', () => {
    const ok = summaryBlock({
      title: 'A fleet of 3 on PostgreSQL',
      command: 'npm run chaos -- --fleet 3',
      recordFile: 'reliability-fleet.md',
      machine: 'Machine: test;',
      seed: 7,
      failures: [],
      checks: 20,
    });
    expect(ok).toContain('**every check passed** (20 checks)');
    expect(ok).toContain('[reliability-fleet.md](reliability-fleet.md)');
    const failed = summaryBlock({
      title: 't',
      command: 'c',
      recordFile: 'r.md',
      machine: 'm',
      seed: 1,
      failures: ['an effect twice'],
      checks: 20,
    });
    expect(failed).toContain('**FAILED**: an effect twice');
  });
});
