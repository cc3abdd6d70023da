import { commandLine, machineLine, startLoadLine } from './bench-support.js';
import { formatSelfTime, type SelfTime } from './cpu-profile-summary.js';

/** What every end-to-end section of docs/benchmarks.md is written with. */
export type SectionContext = {
  /** The load average when the section started. */
  readonly load: number;
};

export const int = (n: number): string => Math.round(n).toLocaleString('en-US');
export const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1
    ? s[(s.length - 1) / 2]!
    : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
export const verdict = (met: boolean): string => (met ? 'met' : '**NOT met**');

export function header(title: string, c: SectionContext, only: string, source: string): string[] {
  return [`## ${title}`, '', machineLine(), startLoadLine(c.load), commandLine(only, source)];
}

export function profileBlock(
  title: string,
  areas: readonly SelfTime[],
  top: readonly SelfTime[],
): string[] {
  return [
    '',
    `<details><summary>${title}</summary>`,
    '',
    '```',
    'self time by area',
    ...formatSelfTime(areas),
    '',
    'top functions by self time',
    ...formatSelfTime(top),
    '```',
    '',
    '</details>',
  ];
}

/** What a profile says in one line: the largest areas (with idle time) and the hottest functions. */
export function whereTimeGoes(areas: readonly SelfTime[], top: readonly SelfTime[]): string {
  const share = (x: SelfTime): string => `${x.name} ${x.percent.toFixed(0)}%`;
  const busy = areas.filter((x) => x.name !== '(idle)' && x.name !== '(program)').slice(0, 5);
  const idle = areas.find((x) => x.name === '(idle)');
  const hot = top.filter((x) => !x.name.startsWith('(')).slice(0, 5);
  return [
    `Where the time goes (self time in the profile below): ${busy.map(share).join(', ')}`,
    idle === undefined ? '' : `; idle ${idle.percent.toFixed(0)}%`,
    `. Hottest functions: ${hot.map((x) => `\`${x.name}\` ${x.percent.toFixed(1)}%`).join(', ')}.`,
  ].join('');
}
