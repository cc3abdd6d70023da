// The overview's rate chart: submissions and completions per bucket as an inline SVG (no chart
// library, no canvas: it scales with the page and its text is selectable).
import { h, svg } from './dom.js';
import { count } from './format.js';

const WIDTH = 300;
const HEIGHT = 60;

function points(values: readonly number[], max: number): string {
  const step = values.length > 1 ? WIDTH / (values.length - 1) : WIDTH;
  return values
    .map((v, i) => `${(i * step).toFixed(1)},${(HEIGHT - 2 - (v / max) * (HEIGHT - 4)).toFixed(1)}`)
    .join(' ');
}

export function sparkline(rate: {
  readonly bucketSeconds: number;
  readonly submitted: readonly number[];
  readonly completed: readonly number[];
}): HTMLElement {
  const max = Math.max(1, ...rate.submitted, ...rate.completed);
  const minutes = Math.round((rate.bucketSeconds * rate.submitted.length) / 60);
  const perSecond = (values: readonly number[]): string => {
    const last = values.slice(-12); // the last minute
    const total = last.reduce((a, b) => a + b, 0);
    return (total / Math.max(1, last.length * rate.bucketSeconds)).toFixed(1);
  };
  const chart = svg(
    'svg',
    {
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      class: 'sparkline',
      role: 'img',
      'aria-label': `submissions and completions over the last ${minutes} minutes`,
      preserveAspectRatio: 'none',
    },
    svg('polyline', { points: points(rate.completed, max), class: 'line completed' }),
    svg('polyline', { points: points(rate.submitted, max), class: 'line submitted' }),
  );
  return h(
    'div',
    { class: 'spark', 'data-testid': 'sparkline' },
    chart,
    h(
      'div',
      { class: 'legend' },
      h('span', { class: 'key submitted' }, `submitted ${perSecond(rate.submitted)}/s`),
      h('span', { class: 'key completed' }, `completed ${perSecond(rate.completed)}/s`),
      h(
        'span',
        { class: 'hint' },
        `last ${minutes} min, peak ${count(max)} per ${rate.bucketSeconds} s`,
      ),
    ),
  );
}
