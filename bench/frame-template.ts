/**
 * A recorded frame split around its offsets and update ids, so that cycle `c` of a replay can be
 * written with offsets shifted by `shift` and update ids that differ per cycle (the commandIds
 * of the intents derive from the update id, so each cycle's intents are new ones).
 */
export type FrameTemplate = {
  readonly parts: readonly string[];
  /** Per gap between parts: an offset (number) or an update id (string). */
  readonly values: readonly (number | string)[];
};

const FIELDS = /"offset":(\d+)|"updateId":"([0-9a-f]+)"/g;

export function frameTemplate(text: string): FrameTemplate {
  const parts: string[] = [];
  const values: (number | string)[] = [];
  let last = 0;
  for (const m of text.matchAll(FIELDS)) {
    const isOffset = m[1] !== undefined;
    const start = m.index + (isOffset ? '"offset":'.length : '"updateId":"'.length);
    const value = isOffset ? m[1]! : m[2]!;
    parts.push(text.slice(last, start));
    values.push(isOffset ? Number(value) : value);
    last = start + value.length;
  }
  parts.push(text.slice(last));
  return { parts, values };
}

/** The frame of cycle `cycle`: offsets + `shift`, update ids ending in the cycle number (hex). */
export function renderFrame(t: FrameTemplate, shift: number, cycle: number): string {
  const tag = cycle.toString(16).padStart(8, '0');
  let s = t.parts[0]!;
  for (let i = 0; i < t.values.length; i++) {
    const v = t.values[i]!;
    s +=
      (typeof v === 'number' ? String(v + shift) : v.slice(0, v.length - 8) + tag) +
      t.parts[i + 1]!;
  }
  return s;
}

/** The largest offset in the templates: a cycle's shift is a multiple of this plus one. */
export function maxOffset(templates: readonly FrameTemplate[]): number {
  let max = 0;
  for (const t of templates)
    for (const v of t.values) if (typeof v === 'number' && v > max) max = v;
  return max;
}
