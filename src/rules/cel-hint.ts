import { closestMatch } from '../core/source/closest-match.js';

/** The variables in scope of an expression. */
export type Variables = readonly string[];
/** Event rule, schedule rule with forEach, schedule rule without (once per slot). */
export type RuleKind = 'event' | 'schedule' | 'slot';

/** The functions rules may call, for "did you mean" hints. */
const KNOWN_FUNCTIONS = [
  'decimal',
  'date',
  'timestamp',
  'duration',
  'size',
  'has',
  'int',
  'uint',
  'double',
  'string',
  'bool',
  'bytes',
  'dyn',
  'type',
  'matches',
  'contains',
  'startsWith',
  'endsWith',
];

/** The hint of a CEL compile error in a rule: what to write instead, when it is likely. */
export function celHint(summary: string, variables: Variables, kind: RuleKind): string | undefined {
  const unknownVar = /^Unknown variable: (\S+)/.exec(summary)?.[1];
  if (unknownVar !== undefined) {
    if (unknownVar === 'event' && kind !== 'event') {
      return kind === 'slot'
        ? 'schedule rules have no `event`; add `forEach:` to iterate over contracts (as `contract`)'
        : 'schedule rules have no `event`: use `contract`, the active contract of this iteration';
    }
    if (unknownVar === 'contract') {
      return kind !== 'event'
        ? '`contract` exists only in schedule rules with `forEach:`'
        : '`contract` exists only in schedule rules with `forEach:`; an event rule uses `event`';
    }
    const guess = closestMatch(unknownVar, variables);
    return guess !== undefined
      ? `did you mean "${guess}"?`
      : `the variables here are ${variables.join(', ')}; text values need quotes ("...")`;
  }
  if (summary.includes('Unexpected character: ='))
    return 'compare with == (a single = is not an operator)';
  const fn = /no matching overload for '([A-Za-z_]\w*)\(/.exec(summary)?.[1];
  if (fn !== undefined && !KNOWN_FUNCTIONS.includes(fn)) {
    const guess = closestMatch(fn, KNOWN_FUNCTIONS);
    return guess !== undefined
      ? `"${fn}" is not a function; did you mean "${guess}"?`
      : `"${fn}" is not a function; available: ${KNOWN_FUNCTIONS.join(', ')}`;
  }
  if (summary.includes('no such overload') && summary.includes('Decimal')) {
    return 'compare and compute decimals with decimals: decimal(event.createArgument.amount) < decimal("1000")';
  }
  return undefined;
}
