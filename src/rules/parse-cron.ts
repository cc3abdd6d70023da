import type { CronSpec } from './compiled-rule.js';

type Field = {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
};

const SECOND: Field = { name: 'second', min: 0, max: 59 };

const FIELDS: readonly Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  // 7 is Sunday too, as in most crons; names map to 0..6.
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The most days each month has (February in a leap year). */
const DAYS_IN = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A cron expression that does not parse; `offset` is 0-based in the expression text. */
export type CronProblem = { readonly problem: string; readonly offset: number };

const FORMAT =
  'write five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * MON-FRI" ' +
  '(or six, with a second field first: "*/5 * * * * *" is every 5 seconds)';

/**
 * Parses a classic 5-field cron expression (`*`, lists, ranges, steps, JAN-DEC and SUN-SAT names,
 * day-of-week 0-7 with 0 and 7 = Sunday) or one of @yearly, @monthly, @weekly, @daily, @hourly.
 * A 6-field expression has a second field (0-59) in front, as in node-cron; five fields mean
 * second 0.
 */
export function parseCron(text: string): CronSpec | CronProblem {
  const trimmed = text.trim();
  const macro = MACROS[trimmed.toLowerCase()];
  if (macro !== undefined) return parseCron(macro);
  if (trimmed.startsWith('@')) {
    return {
      problem: `unknown cron macro "${trimmed}": use @hourly, @daily, @weekly, @monthly or @yearly`,
      offset: text.indexOf('@'),
    };
  }
  const parts: { text: string; offset: number }[] = [];
  for (const m of text.matchAll(/\S+/g)) parts.push({ text: m[0], offset: m.index });
  if (parts.length !== 5 && parts.length !== 6) {
    return {
      problem: `cron expression has ${parts.length} field(s), not 5 (or 6): ${FORMAT}`,
      offset: parts[6]?.offset ?? 0,
    };
  }
  const withSeconds = parts.length === 6;
  const fields = withSeconds ? [SECOND, ...FIELDS] : FIELDS;
  const sets: number[][] = [];
  for (let i = 0; i < fields.length; i++) {
    const part = parts[i]!;
    const parsed = parseField(part.text, fields[i]!);
    if ('problem' in parsed)
      return { problem: parsed.problem, offset: part.offset + parsed.offset };
    sets.push(parsed.values);
  }
  const seconds = withSeconds ? sets.shift()! : [0];
  if (withSeconds) parts.shift();
  const dow = [...new Set(sets[4]!.map((d) => (d === 7 ? 0 : d)))].sort((a, b) => a - b);
  const dayOfMonthStar = parts[2]!.text === '*' || parts[2]!.text === '?';
  const dayOfWeekStar = parts[4]!.text === '*' || parts[4]!.text === '?';
  // Days of the month alone (a day of the week would fire on its own): the 30th of February
  // parses, and the rule would never run.
  if (!dayOfMonthStar && dayOfWeekStar && !sets[3]!.some((m) => sets[2]![0]! <= DAYS_IN[m - 1]!)) {
    return {
      problem: `day ${parts[2]!.text} of ${parts[3]!.text === '*' ? 'any month' : `month ${parts[3]!.text}`} never comes: the rule would never run`,
      offset: parts[2]!.offset,
    };
  }
  return {
    seconds,
    minutes: sets[0]!,
    hours: sets[1]!,
    daysOfMonth: sets[2]!,
    months: sets[3]!,
    daysOfWeek: dow,
    dayOfMonthStar,
    dayOfWeekStar,
  };
}

function parseField(text: string, field: Field): { values: number[] } | CronProblem {
  const values = new Set<number>();
  let offset = 0;
  for (const item of text.split(',')) {
    const parsed = parseItem(item, field);
    if ('problem' in parsed) return { problem: parsed.problem, offset: offset + parsed.offset };
    for (const v of parsed.values) values.add(v);
    offset += item.length + 1;
  }
  return { values: [...values].sort((a, b) => a - b) };
}

function parseItem(item: string, field: Field): { values: number[] } | CronProblem {
  const [rangeText = '', stepText, extra] = item.split('/');
  if (extra !== undefined) return bad(`"${item}" has two steps`, field, 0);
  let step = 1;
  if (stepText !== undefined) {
    if (!/^\d+$/.test(stepText) || Number(stepText) === 0) {
      return bad(`step "${stepText}" must be a positive number`, field, rangeText.length + 1);
    }
    step = Number(stepText);
  }
  let from: number;
  let to: number;
  if (rangeText === '*' || rangeText === '?') {
    from = field.min;
    to = field.name === 'day of week' ? 6 : field.max;
  } else {
    const [a = '', b, more] = rangeText.split('-');
    if (more !== undefined) return bad(`"${rangeText}" is not a range`, field, 0);
    const start = value(a, field);
    if (start === null) return bad(`"${a}" is not a valid ${field.name}`, field, 0);
    from = start;
    if (b === undefined) {
      to = stepText === undefined ? start : field.max;
    } else {
      const end = value(b, field);
      if (end === null) return bad(`"${b}" is not a valid ${field.name}`, field, a.length + 1);
      if (end < start) return bad(`range ${rangeText} goes backwards`, field, 0);
      to = end;
    }
  }
  const values: number[] = [];
  for (let v = from; v <= to; v += step) values.push(v);
  return { values };
}

function value(text: string, field: Field): number | null {
  const index = field.names?.indexOf(text.toUpperCase()) ?? -1;
  if (index >= 0) return index + (field.name === 'month' ? 1 : 0);
  if (!/^\d{1,2}$/.test(text)) return null;
  const n = Number(text);
  return n >= field.min && n <= field.max ? n : null;
}

function bad(what: string, field: Field, offset: number): CronProblem {
  const names =
    field.names === undefined ? '' : ` or ${field.names[0]}-${field.names[field.names.length - 1]}`;
  return {
    problem: `${what}: the ${field.name} field takes ${field.min}-${field.max}${names}`,
    offset,
  };
}
