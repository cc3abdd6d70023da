import type {
  ArchivedEvent,
  CreatedEvent,
  ExercisedEvent,
  JsTransaction,
} from '../ledger/wire/wire-types.js';
import { ConversionMemo } from './cel/conversion-memo.js';
import { MEMO_KEY } from './cel/literal-calls.js';
import { fillMissingFields, type FieldTrie } from './field-reads.js';

/**
 * The CEL variables `event` and `contract`: the wire event with its ints and timestamps typed,
 * the Daml fields a rule reads filled in with `null` where the participant left them out, and
 * for interface rules the interface view as `view`.
 */

type AnyEvent = CreatedEvent | ExercisedEvent | ArchivedEvent;

/** The transaction fields an event's rules see besides the event itself. */
export type TransactionInfo = Pick<
  JsTransaction,
  'updateId' | 'offset' | 'recordTime' | 'effectiveAt' | 'workflowId'
>;

/** The last few timestamps parsed: a transaction's events share their record and creation times. */
const recentTimes: { text: string; date: Date }[] = [];

/** A wire timestamp as a CEL timestamp; text that is not one stays text. */
export function timestampOf(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  for (const recent of recentTimes) if (recent.text === text) return recent.date;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return text;
  // CEL values are never mutated, so one Date can serve every event that has this time.
  const date = new Date(ms);
  if (recentTimes.length >= 4) recentTimes.pop();
  recentTimes.unshift({ text, date });
  return date;
}

function intOf(n: unknown): unknown {
  return typeof n === 'number' && Number.isSafeInteger(n) ? BigInt(n) : n;
}

/**
 * The top-level fields of the event variable whose value is not the wire event's: typed by
 * eventFieldsOf (ints, timestamps) or added by eventVariableOf (the transaction's). Below every
 * other field the variable holds the wire's values, with fields left out read as null: so the
 * rule guards can read those on the wire event, before (or without) the variable is built.
 */
export const NOT_AS_ON_THE_WIRE: ReadonlySet<string> = new Set([
  'offset',
  'nodeId',
  'lastDescendantNodeId',
  'createdAt',
  'updateId',
  'recordTime',
  'effectiveAt',
  'workflowId',
]);

/**
 * The CEL view of a wire event (or an active contract's CreatedEvent): ints and timestamps typed,
 * and the Daml fields in `fieldReads` that the participant left out as `null` (copied, see
 * field-reads.ts). Copied as one literal when its fields come as the API sends them, else key by
 * key: a spread followed by retyping fields (number → bigint) sends V8 through a slow path that
 * costs several microseconds per event.
 */
export function eventFieldsOf(
  event: AnyEvent,
  fieldReads: FieldTrie | null = null,
): Record<string, unknown> {
  const source = event as unknown as Readonly<Record<string, unknown>>;
  const out = copyInKnownOrder(source) ?? copyKeyByKey(source);
  if (fieldReads !== null) {
    // Indexed, not `for (const [root, trie] of …)`: destructuring a tuple runs the iterator
    // protocol, objects for the collector on every event.
    const children = fieldReads.children;
    for (let i = 0; i < children.length; i++) {
      const root = children[i]![0];
      const trie = children[i]![1];
      if (Object.hasOwn(out, root)) out[root] = fillMissingFields(out[root], trie);
    }
  }
  return out;
}

function copyKeyByKey(source: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const value = source[key];
    switch (key) {
      case 'offset':
      case 'nodeId':
      case 'lastDescendantNodeId':
        out[key] = intOf(value);
        break;
      case 'createdAt':
        out[key] = timestampOf(value);
        break;
      default:
        out[key] = value;
    }
  }
  return out;
}

/**
 * The fields of each event in the order Canton's JSON Ledger API sends them (the proto's, as the
 * OpenAPI spec lists them). `contractKey` (a template without a key) and `interfaceId` (a choice
 * of the template itself) come as `null`, which parseWireJson drops: each may be missing.
 */
const CREATED_FIELDS: readonly string[] = [
  'offset',
  'nodeId',
  'contractId',
  'templateId',
  'contractKey',
  'contractKeyHash',
  'createArgument',
  'createdEventBlob',
  'interfaceViews',
  'witnessParties',
  'signatories',
  'observers',
  'createdAt',
  'packageName',
  'representativePackageId',
  'acsDelta',
];
const EXERCISED_FIELDS: readonly string[] = [
  'offset',
  'nodeId',
  'contractId',
  'templateId',
  'interfaceId',
  'choice',
  'choiceArgument',
  'actingParties',
  'consuming',
  'witnessParties',
  'lastDescendantNodeId',
  'exerciseResult',
  'packageName',
  'implementedInterfaces',
  'acsDelta',
];
const ARCHIVED_FIELDS: readonly string[] = [
  'offset',
  'nodeId',
  'contractId',
  'templateId',
  'witnessParties',
  'packageName',
  'implementedInterfaces',
];

const OTHER = 0;
const ALL = 1;
const WITHOUT_OPTIONAL = 2;

/**
 * Whether the enumerable keys of `source` are `fields` in this order (ALL), the same without
 * `optional` (WITHOUT_OPTIONAL), or anything else (OTHER).
 */
function shapeOf(
  source: Readonly<Record<string, unknown>>,
  fields: readonly string[],
  optional: string | null,
): typeof OTHER | typeof ALL | typeof WITHOUT_OPTIONAL {
  let i = 0;
  let skipped = false;
  for (const key in source) {
    if (fields[i] === optional && key !== optional) {
      skipped = true;
      i++;
    }
    if (fields[i] !== key) return OTHER;
    i++;
  }
  if (i !== fields.length) return OTHER;
  return skipped ? WITHOUT_OPTIONAL : ALL;
}

/**
 * copyKeyByKey as one object literal, for the events whose fields come exactly as the JSON
 * Ledger API sends them (the same keys in the same order, so the copy is the same): a literal
 * is made in one step, where a store by a computed key per field takes V8's generic path.
 * Created and exercised events have a literal with their optional field and one without it
 * (one literal and a store of the field when present made the ingest pipeline about 10%
 * slower, 2026-11-27). Null for any other event.
 */
function copyInKnownOrder(s: Readonly<Record<string, unknown>>): Record<string, unknown> | null {
  if (typeof s.createArgument === 'object') {
    const shape = shapeOf(s, CREATED_FIELDS, 'contractKey');
    if (shape === ALL) {
      return {
        offset: intOf(s.offset),
        nodeId: intOf(s.nodeId),
        contractId: s.contractId,
        templateId: s.templateId,
        contractKey: s.contractKey,
        contractKeyHash: s.contractKeyHash,
        createArgument: s.createArgument,
        createdEventBlob: s.createdEventBlob,
        interfaceViews: s.interfaceViews,
        witnessParties: s.witnessParties,
        signatories: s.signatories,
        observers: s.observers,
        createdAt: timestampOf(s.createdAt),
        packageName: s.packageName,
        representativePackageId: s.representativePackageId,
        acsDelta: s.acsDelta,
      };
    }
    if (shape === WITHOUT_OPTIONAL) {
      return {
        offset: intOf(s.offset),
        nodeId: intOf(s.nodeId),
        contractId: s.contractId,
        templateId: s.templateId,
        contractKeyHash: s.contractKeyHash,
        createArgument: s.createArgument,
        createdEventBlob: s.createdEventBlob,
        interfaceViews: s.interfaceViews,
        witnessParties: s.witnessParties,
        signatories: s.signatories,
        observers: s.observers,
        createdAt: timestampOf(s.createdAt),
        packageName: s.packageName,
        representativePackageId: s.representativePackageId,
        acsDelta: s.acsDelta,
      };
    }
    return null;
  }
  if (typeof s.choice === 'string') {
    const shape = shapeOf(s, EXERCISED_FIELDS, 'interfaceId');
    if (shape === ALL) {
      return {
        offset: intOf(s.offset),
        nodeId: intOf(s.nodeId),
        contractId: s.contractId,
        templateId: s.templateId,
        interfaceId: s.interfaceId,
        choice: s.choice,
        choiceArgument: s.choiceArgument,
        actingParties: s.actingParties,
        consuming: s.consuming,
        witnessParties: s.witnessParties,
        lastDescendantNodeId: intOf(s.lastDescendantNodeId),
        exerciseResult: s.exerciseResult,
        packageName: s.packageName,
        implementedInterfaces: s.implementedInterfaces,
        acsDelta: s.acsDelta,
      };
    }
    if (shape === WITHOUT_OPTIONAL) {
      return {
        offset: intOf(s.offset),
        nodeId: intOf(s.nodeId),
        contractId: s.contractId,
        templateId: s.templateId,
        choice: s.choice,
        choiceArgument: s.choiceArgument,
        actingParties: s.actingParties,
        consuming: s.consuming,
        witnessParties: s.witnessParties,
        lastDescendantNodeId: intOf(s.lastDescendantNodeId),
        exerciseResult: s.exerciseResult,
        packageName: s.packageName,
        implementedInterfaces: s.implementedInterfaces,
        acsDelta: s.acsDelta,
      };
    }
    return null;
  }
  if (shapeOf(s, ARCHIVED_FIELDS, null) === ALL) {
    return {
      offset: intOf(s.offset),
      nodeId: intOf(s.nodeId),
      contractId: s.contractId,
      templateId: s.templateId,
      witnessParties: s.witnessParties,
      packageName: s.packageName,
      implementedInterfaces: s.implementedInterfaces,
    };
  }
  return null;
}

export function eventVariableOf(
  event: AnyEvent,
  tx: TransactionInfo,
  fieldReads: FieldTrie | null,
): Readonly<Record<string, unknown>> {
  const out = eventFieldsOf(event, fieldReads);
  out.updateId = tx.updateId;
  out.recordTime = timestampOf(tx.recordTime);
  out.effectiveAt = timestampOf(tx.effectiveAt);
  out.workflowId = tx.workflowId ?? '';
  return out;
}

/** An interface view's value as `view`: its left-out Optional fields `null` like the contract's. */
export function viewOf(viewValue: unknown, fieldReads: FieldTrie | null): unknown {
  let view = viewValue;
  if (fieldReads !== null) {
    for (const [root, trie] of fieldReads.children) {
      if (root === 'view') view = fillMissingFields(view, trie);
    }
  }
  return view;
}

/**
 * `variable` with `view` set to an interface view's value (viewOf); a copy: the event variable is
 * shared, and other rules of the event see other interfaces' views.
 */
export function withView(
  variable: Readonly<Record<string, unknown>>,
  viewValue: unknown,
  fieldReads: FieldTrie | null,
): Readonly<Record<string, unknown>> {
  return { ...variable, view: viewOf(viewValue, fieldReads) };
}

/**
 * The CEL variables of an event's evaluation, made for the first rule evaluated; the next rules
 * only set their own `event` (an interface view) and `rule`. They carry the event's conversions
 * (`decimal(…)`, `date(…)` of its fields, ConversionMemo), shared by its rules.
 */
export function celVariablesOf(
  event: Readonly<Record<string, unknown>>,
  parties: Readonly<Record<string, string>>,
  now: Date,
  rule: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return {
    event,
    parties,
    rule,
    now,
    today: utcMidnight(now),
    [MEMO_KEY]: new ConversionMemo(),
  };
}

const DAY_MS = 86_400_000;
let lastNow: Date | undefined;
let lastToday: Date | undefined;

/** `today` for `now`; remembered, since a stream of events is usually evaluated with one `now`. */
function utcMidnight(now: Date): Date {
  if (now !== lastNow || lastToday === undefined) {
    lastToday = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
    lastNow = now;
  }
  return lastToday;
}
