import { describe, expect, it } from 'vitest';
import { zoneFormats } from '../../src/core/zone-formats.js';

describe('zoneFormats', () => {
  it('makes one format per zone, with the given options, and keeps it', () => {
    const formatFor = zoneFormats('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' });
    const tokyo = formatFor('Asia/Tokyo');
    expect(formatFor('Asia/Tokyo')).toBe(tokyo);
    expect(formatFor('UTC')).not.toBe(tokyo);
    expect(tokyo.resolvedOptions().timeZone).toBe('Asia/Tokyo');
    // 2025-03-02T20:00Z is already the 3rd in Tokyo.
    const parts = tokyo.formatToParts(Date.UTC(2025, 2, 2, 20));
    expect(parts.find((p) => p.type === 'day')?.value).toBe('03');
  });
});
