import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/rules/parse-cron.js';

describe('parseCron', () => {
  it('parses lists, ranges, steps and names', () => {
    expect(parseCron('*/15 9-17 1,15 JAN-MAR mon-fri')).toEqual({
      minutes: [0, 15, 30, 45],
      hours: [9, 10, 11, 12, 13, 14, 15, 16, 17],
      daysOfMonth: [1, 15],
      months: [1, 2, 3],
      daysOfWeek: [1, 2, 3, 4, 5],
      dayOfMonthStar: false,
      dayOfWeekStar: false,
      seconds: [0],
    });
  });

  it('takes an optional second field in front (six fields)', () => {
    expect(parseCron('*/5 * * * * *')).toMatchObject({
      seconds: [0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55],
      minutes: Array.from({ length: 60 }, (_, i) => i),
      dayOfWeekStar: true,
    });
    expect(parseCron('30 0 9 * * MON-FRI')).toMatchObject({
      seconds: [30],
      minutes: [0],
      hours: [9],
      daysOfWeek: [1, 2, 3, 4, 5],
      dayOfWeekStar: false,
    });
    expect(parseCron('0 9 * * *')).toMatchObject({ seconds: [0], minutes: [0], hours: [9] });
  });

  it('folds day-of-week 7 into Sunday and understands macros and n/step', () => {
    expect(parseCron('0 0 * * 5-7')).toMatchObject({ daysOfWeek: [0, 5, 6], dayOfWeekStar: false });
    expect(parseCron('@daily')).toMatchObject({ minutes: [0], hours: [0], dayOfMonthStar: true });
    expect(parseCron('@weekly')).toMatchObject({ daysOfWeek: [0] });
    expect(parseCron('5/20 * * * *')).toMatchObject({ minutes: [5, 25, 45] });
    expect(parseCron('0 0 * * *')).toMatchObject({
      daysOfWeek: [0, 1, 2, 3, 4, 5, 6],
      dayOfWeekStar: true,
    });
  });

  it.each([
    ['0 9 * *', 'cron expression has 4 field(s), not 5 (or 6)', 0],
    ['0 0 9 * * * *', 'cron expression has 7 field(s), not 5 (or 6)', 12],
    ['60 0 9 * * *', '"60" is not a valid second: the second field takes 0-59', 0],
    ['0 60 9 * * *', '"60" is not a valid minute: the minute field takes 0-59', 2],
    [
      '0 0 9 * * FRY',
      '"FRY" is not a valid day of week: the day of week field takes 0-7 or SUN-SAT',
      10,
    ],
    ['60 * * * *', '"60" is not a valid minute: the minute field takes 0-59', 0],
    ['0 24 * * *', '"24" is not a valid hour: the hour field takes 0-23', 2],
    ['0 0 0 * *', '"0" is not a valid day of month: the day of month field takes 1-31', 4],
    ['0 0 * 13 *', '"13" is not a valid month: the month field takes 1-12 or JAN-DEC', 6],
    [
      '0 0 * * MON-FRY',
      '"FRY" is not a valid day of week: the day of week field takes 0-7 or SUN-SAT',
      12,
    ],
    ['0 0 * * 5-1', 'range 5-1 goes backwards: the day of week field takes 0-7 or SUN-SAT', 8],
    ['*/0 * * * *', 'step "0" must be a positive number: the minute field takes 0-59', 2],
    ['0 1,2,x * * *', '"x" is not a valid hour: the hour field takes 0-23', 6],
    [
      '@sometimes',
      'unknown cron macro "@sometimes": use @hourly, @daily, @weekly, @monthly or @yearly',
      0,
    ],
    // Days that never come: each field parses, the rule would never run.
    ['0 9 31 2 *', 'day 31 of month 2 never comes: the rule would never run', 4],
    ['0 9 30,31 FEB *', 'day 30,31 of month FEB never comes', 4],
    ['0 0 31 4,6,9,11 *', 'day 31 of month 4,6,9,11 never comes', 4],
    ['*/5 0 9 31 2 *', 'day 31 of month 2 never comes', 8],
  ])('%s is refused', (text, problem, offset) => {
    const result = parseCron(text);
    expect('problem' in result && result).toEqual({
      problem: expect.stringContaining(problem) as string,
      offset,
    });
  });

  it.each(['0 9 29 2 *', '0 9 31 4,5 *', '0 0 31 * *', '0 9 31 2 MON'])(
    '%s comes (a leap day, a month with the day, or a day of the week besides)',
    (text) => {
      expect('problem' in parseCron(text)).toBe(false);
    },
  );
});
