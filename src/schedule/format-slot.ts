import { offsetAt, wallClockOf } from './zone-offset.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/**
 * A slot as people read it in the rule's time zone: `2026-01-05 Mon 09:00:00 +01:00`. The
 * offset makes the two 02:30s of a fall-back day tell apart.
 */
export function formatSlot(slot: number, timeZone: string): string {
  const wall = new Date(wallClockOf(slot, timeZone));
  const offsetMinutes = Math.round(offsetAt(slot, timeZone) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const offset = `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  const date = wall.toISOString().slice(0, 10);
  const time = wall.toISOString().slice(11, 19);
  return `${date} ${DAYS[wall.getUTCDay()]} ${time} ${offset}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
