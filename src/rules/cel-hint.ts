import { closestMatch } from '../core/source/closest-match.js';

/** The variables in scope of an expression. */
export type Variables = readonly string[];
/**
 * Event rule, schedule rule with forEach, schedule rule without (once per slot), and the `then`
 * of a schedule rule with `forEach.batch` (`contracts`, not `contract`).
 */
export type RuleKind = 'event' | 'schedule' | 'slot' | 'batch';

/** The functions rules may call, for "did you mean" hints. */
const KNOWN_FUNCTIONS = [
  'decimal',
  'sum',
  'date',
  'damlDate',
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
        : kind === 'batch'
          ? 'schedule rules have no `event`: a batch rule’s `then` uses `contracts`, the batch'
          : 'schedule rules have no `event`: use `contract`, the active contract of this iteration';
    }
    if (unknownVar === 'contract') {
      return kind === 'batch'
        ? 'a batch rule fires once per batch: `then` sees `contracts`, the list of the batch (e.g. `contracts.map(c, c.contractId)`); `contract` is in `when` and `groupBy`'
        : kind !== 'event'
          ? '`contract` exists only in schedule rules with `forEach:`'
          : '`contract` exists only in schedule rules with `forEach:`; an event rule uses `event`';
    }
    if (unknownVar === 'contracts') {
      return kind === 'schedule'
        ? '`contracts` (the batch) exists only in the `then` of a rule with `forEach.batch`; `when` and `groupBy` see one `contract` at a time'
        : '`contracts` (the batch) exists only in the `then` of a schedule rule with `forEach: { …, batch: {…} }`';
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
  if (summary.includes('no such overload') && summary.includes('google.protobuf.Timestamp')) {
    return 'a date or time compares with a date or time: date(event.createArgument.due) < date("2026-01-01"), timestamp(…) > now';
  }
  if (summary.includes('no such overload') && summary.includes('google.protobuf.Duration')) {
    return 'a duration compares with a duration: duration("1h")';
  }
  if (summary.startsWith('Exceeded maxDepth')) {
    return 'the expression nests too deep: split it into several conditions (`when:` takes a list)';
  }
  if (summary.includes('no such overload') && summary.includes('Decimal')) {
    return 'compare and compute decimals with decimals: decimal(event.createArgument.amount) < decimal("1000")';
  }
  return undefined;
}
