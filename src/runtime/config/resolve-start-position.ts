import { closestMatch } from '../../core/source/index.js';
import type { StartPosition } from './bot-config.js';
import { START_KEYWORDS } from './bot-config-schema.js';
import type { ConfigCheckContext } from './config-problem-list.js';

/**
 * `start:` as a StartPosition: a keyword, or an offset (a whole number, also written as text).
 * Returns undefined when it is neither (a problem was added).
 */
export function resolveStartPosition(
  value: string | number,
  { at, problems, describe }: ConfigCheckContext,
): StartPosition | undefined {
  const offset =
    typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : undefined;
  if (offset !== undefined && Number.isSafeInteger(offset) && offset >= 0) {
    return { kind: 'offset', offset };
  }
  if (typeof value === 'string' && (START_KEYWORDS as readonly string[]).includes(value)) {
    return { kind: value as (typeof START_KEYWORDS)[number] };
  }
  const guess = typeof value === 'string' ? closestMatch(value, START_KEYWORDS) : undefined;
  problems.add(
    at.pos(['start']),
    ['start'],
    'BAD_START',
    `\`start\` must be checkpoint, ledger-end, begin or an offset, not ${describe(['start'], value)}`,
    guess === undefined
      ? 'an offset is a whole number of at least 0, e.g. start: 1200'
      : `did you mean "${guess}"?`,
  );
  return undefined;
}
