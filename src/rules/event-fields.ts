import { EVERY_ITEM, type ReadPath } from './cel/read-paths.js';
import { closestMatch } from '../core/source/closest-match.js';
import type { Trigger } from './compiled-rule.js';
import type { UnknownFieldRead } from './unknown-field-reads.js';

/**
 * The fields of `event` (and of `contract`) depend on what triggered the rule: a created event
 * has `createArgument`, an exercise `choiceArgument`, an archive neither. Reading a field the
 * kind does not have fails at run time ("No such key"), on every event; `validate` reports it at
 * its line and column instead, from the field paths the CEL AST reads (read-paths.ts).
 */

/** What `event` (or `contract`) holds for a rule: one of the wire events, as evaluate builds it. */
export type EventShape = 'created' | 'exercised' | 'archived' | 'contract';

/** Fields every event of the update stream has (3.4 and 3.5). */
const EVENT_COMMON = [
  'offset',
  'nodeId',
  'contractId',
  'templateId',
  'packageName',
  'witnessParties',
] as const;

/** The transaction's fields evaluate adds to `event`. */
const TRANSACTION = ['updateId', 'recordTime', 'effectiveAt', 'workflowId'] as const;

/** A CreatedEvent's own fields (optional ones included: they may be absent on the wire). */
const CREATED = [
  ...EVENT_COMMON,
  'createArgument',
  'contractKey',
  'contractKeyHash',
  'createdEventBlob',
  'interfaceViews',
  'signatories',
  'observers',
  'createdAt',
  'representativePackageId',
  'acsDelta',
] as const;

const EXERCISED = [
  ...EVENT_COMMON,
  'choice',
  'choiceArgument',
  'exerciseResult',
  'actingParties',
  'consuming',
  'interfaceId',
  'lastDescendantNodeId',
  'implementedInterfaces',
  'acsDelta',
] as const;

/**
 * An `archived` rule sees an ArchivedEvent (ACS_DELTA streams) or the consuming ExercisedEvent
 * (LEDGER_EFFECTS streams): only the fields both have are always there.
 */
const ARCHIVED = [...EVENT_COMMON, 'implementedInterfaces'] as const;

const FIELDS: Readonly<Record<EventShape, readonly string[]>> = {
  created: [...CREATED, ...TRANSACTION],
  exercised: [...EXERCISED, ...TRANSACTION],
  archived: [...ARCHIVED, ...TRANSACTION],
  // An active contract (schedule `forEach`) is its CreatedEvent, without a transaction.
  contract: CREATED,
};

const WHAT: Readonly<Record<EventShape, string>> = {
  created: 'a created event',
  exercised: 'an exercised event',
  archived: 'an archived event',
  contract: 'an active contract',
};

/** The shape of `event` or `contract` for a trigger; null when there is neither. */
export function eventShapeOf(trigger: Trigger): EventShape | null {
  if (trigger.kind !== 'schedule') return trigger.kind;
  return trigger.forEach === null ? null : 'contract';
}

/**
 * Whether `event` (or `contract`) has `view`: the interface view, for a created trigger or a
 * forEach that names an interface (evaluate.ts takes it from the event's `interfaceViews`).
 */
export function hasInterfaceView(trigger: Trigger): boolean {
  if (trigger.kind === 'created') return trigger.refKind === 'interface';
  return trigger.kind === 'schedule' && trigger.forEach?.refKind === 'interface';
}

/** The fields `event` (or `contract`) has for a shape, sorted; `view` with an interface view. */
export function eventFields(shape: EventShape, view = false): readonly string[] {
  const key = `${shape}${view ? '+view' : ''}`;
  let fields = FIELD_LISTS.get(key);
  if (fields === undefined) {
    fields = Object.freeze([...new Set([...FIELDS[shape], ...(view ? ['view'] : [])])].sort());
    FIELD_LISTS.set(key, fields);
  }
  return fields;
}

/** `eventFields`' answers: asked for every expression of every rule, made once. */
const FIELD_LISTS = new Map<string, readonly string[]>();

/** The reads of one expression that name a field `event` (or `contract`) does not have. */
export function unknownEventFieldReads(
  reads: readonly ReadPath[],
  shape: EventShape,
  view = false,
): UnknownFieldRead[] {
  const variable = shape === 'contract' ? 'contract' : 'event';
  const fields = eventFields(shape, view);
  const out: UnknownFieldRead[] = [];
  const seen = new Set<number>();
  for (const path of reads) {
    const first = path.segments[0];
    if (path.variable !== variable || first === undefined || first.name === EVERY_ITEM) continue;
    if (fields.includes(first.name) || seen.has(first.offset)) continue;
    seen.add(first.offset);
    out.push({
      offset: first.offset,
      message: `${WHAT[shape]} has no field "${first.name}"`,
      hint: hintFor(first.name, shape, fields),
    });
  }
  return out;
}

function hintFor(name: string, shape: EventShape, fields: readonly string[]): string {
  const owners = (['created', 'exercised', 'archived'] as const).filter(
    (s) => s !== shape && FIELDS[s].includes(name),
  );
  const guess = closestMatch(name, fields);
  const parts: string[] = [];
  if (guess !== undefined) parts.push(`did you mean "${guess}"?`);
  if (name === 'view' && !fields.includes('view')) {
    parts.push(
      shape === 'created' || shape === 'contract'
        ? '`view` is the interface view of a rule on an interface (`created:` or `forEach:` naming one); this rule names a template.'
        : '`view` is the interface view of created events and active contracts of an interface rule.',
    );
  }
  if (owners.length > 0 && shape !== 'contract') {
    parts.push(
      `"${name}" is a field of ${owners.map((s) => `${s} events`).join(' and ')}, not of ${shape} ones.`,
    );
  }
  if (shape === 'archived' && FIELDS.exercised.includes(name)) {
    parts.push('An archive may come as an ArchivedEvent, which has only the fields below.');
  }
  parts.push(`${capitalise(WHAT[shape])} has: ${fields.join(', ')}`);
  return parts.join(' ');
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
