import { parseDamlDate } from './cel/daml-time-text.js';
import { isPlainRecord } from './field-reads.js';
import type { RuleGuard } from './rule-index.js';
import { thresholdRejects, type ThresholdReads } from './threshold-guards.js';

/**
 * What the guards read of one event: the text at each guarded field by its readId (null: not
 * text), and each guard's verdict by its id (the rules of a template share guards). Arrays by
 * id, not Maps by text: an event asks a few of them for each rule.
 */
export type GuardReads = {
  readonly texts: (string | null | undefined)[];
  /**
   * The last text a date guard read and whether it is a date: the rules of one template test
   * the same field. Whether a text is a date depends on the text alone, so it outlives the event.
   */
  dateText: string | undefined;
  dateValid: boolean;
  /**
   * Each guard's verdict, valid where `verdictEvents` holds the current `event`: a reused
   * object moves on to its next event by one increment instead of emptying an array as long as
   * the index has guards (emptying 96 slots took 4% of the ingest pipeline's time).
   */
  readonly verdicts: boolean[];
  readonly verdictEvents: number[];
  event: number;
  /** Made when the event reaches its first threshold guard. */
  thresholds: ThresholdReads | undefined;
};

/**
 * Whether a guard shows the rule's first condition false (see guardRejects). `variable(of)` makes
 * the event's CEL variable for a guard that reads it: a function and its argument rather than a
 * closure, which the hot path would allocate for every rule it visits.
 */
export function guardFails<T>(
  guards: readonly RuleGuard[],
  wire: Readonly<Record<string, unknown>>,
  variable: (of: T) => Readonly<Record<string, unknown>>,
  of: T,
  parties: Readonly<Record<string, string>>,
  reads: GuardReads,
): boolean {
  for (let i = 0; i < guards.length; i++) {
    const guard = guards[i]!;
    let fails: boolean;
    if (reads.verdictEvents[guard.id] === reads.event) fails = reads.verdicts[guard.id]!;
    else {
      // Most guards read the wire event: an event whose rules all fail their guards never
      // builds its CEL variable.
      fails = guardRejects(guard, guard.onWire ? wire : variable(of), parties, reads);
      reads.verdicts[guard.id] = fails;
      reads.verdictEvents[guard.id] = reads.event;
    }
    if (fails) return true;
  }
  return false;
}

/**
 * Whether `guard` shows its rule's first condition false (see RuleGuard): the field holds text
 * and the guard's equality rejects it. Exact: a field that is not text, or a party alias the
 * config lacks, decides nothing, and the rule is evaluated as written.
 */
function guardRejects(
  guard: RuleGuard,
  event: Readonly<Record<string, unknown>>,
  parties: Readonly<Record<string, string>>,
  reads: GuardReads,
): boolean {
  const expected = guard.expected;
  if (expected.kind === 'threshold') {
    return thresholdRejects(
      expected,
      event,
      (reads.thresholds ??= { values: [], cuts: [], input: { event: undefined } }),
    );
  }
  const text = readText(reads, guard.readId, guard.fields, event);
  if (text === null) return false;
  switch (expected.kind) {
    case 'text':
      return !expected.values.includes(text);
    case 'party': {
      const id: unknown = Object.hasOwn(parties, expected.alias) ? parties[expected.alias] : null;
      return typeof id === 'string' && id !== text;
    }
    case 'startsWith':
      return !text.startsWith(expected.text);
    case 'endsWith':
      return !text.endsWith(expected.text);
    case 'contains':
      return !text.includes(expected.text);
    case 'date': {
      if (text === expected.text) return false;
      if (reads.dateText !== text) {
        reads.dateValid = parseDamlDate(text) !== null;
        reads.dateText = text;
      }
      return reads.dateValid;
    }
  }
}

/** The text at `fields` of the event (textAt), read once per event by its slot (readId). */
export function readText(
  reads: GuardReads,
  readId: number,
  fields: readonly string[],
  event: Readonly<Record<string, unknown>>,
): string | null {
  let text = reads.texts[readId];
  if (text === undefined) {
    text = textAt(event, fields);
    reads.texts[readId] = text;
  }
  return text;
}

/** The text at `fields` below `value`, read as CEL reads plain objects; null when not text. */
export function textAt(value: unknown, fields: readonly string[]): string | null {
  let at = value;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (!isPlainRecord(at) || !Object.hasOwn(at, field)) return null;
    at = at[field];
  }
  return typeof at === 'string' ? at : null;
}

export function newGuardReads(): GuardReads {
  return {
    texts: [],
    dateText: undefined,
    dateValid: false,
    verdicts: [],
    verdictEvents: [],
    event: 0,
    thresholds: undefined,
  };
}

const reused = new WeakMap<object, GuardReads>();

/**
 * Empty guard reads for the next event of `owner` (a rule index): one object per owner, emptied
 * at each call. A fresh one per event was about 1 KB of garbage, its arrays growing as the
 * event's guard ids came; these keep their size. Only for an evaluation that finishes with its
 * event before the owner's next begins (evaluateCounted: synchronous, not nested).
 */
export function emptiedGuardReads(owner: object): GuardReads {
  const reads = reused.get(owner);
  if (reads === undefined) {
    const fresh = newGuardReads();
    reused.set(owner, fresh);
    return fresh;
  }
  // Loops, not Array.prototype.fill: a call into the runtime costs more than these few slots.
  emptied(reads.texts);
  reads.event += 1;
  const thresholds = reads.thresholds;
  if (thresholds !== undefined) {
    emptied(thresholds.values);
    emptied(thresholds.cuts);
    thresholds.input.event = undefined;
  }
  return reads;
}

function emptied(slots: unknown[]): void {
  for (let i = 0; i < slots.length; i++) slots[i] = undefined;
}
