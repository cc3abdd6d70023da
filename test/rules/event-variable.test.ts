import { describe, expect, it } from 'vitest';
import { eventFieldsOf } from '../../src/rules/event-variable.js';
import type { AnyEvent } from '../../src/rules/match-event.js';
import {
  archivedEvent as cantonArchived,
  createdEvent as cantonCreated,
  exercisedEvent as cantonExercised,
} from '../ledger/canton-samples.js';
import { archived, created, exercised } from './rule-fixtures.js';

/**
 * The fields as Canton's JSON Ledger API (and the sandbox) sends them, in its order: the Canton
 * samples', written from its codecs.
 */
const CREATED_ORDER = Object.keys(cantonCreated);
const EXERCISED_ORDER = Object.keys(cantonExercised);
const ARCHIVED_ORDER = Object.keys(cantonArchived);

function ordered(source: object, keys: readonly string[]): Record<string, unknown> {
  const from = source as Record<string, unknown>;
  return Object.fromEntries(keys.map((k) => [k, Object.hasOwn(from, k) ? from[k] : null]));
}

/** The event variable's fields as the rules see them: the wire's, in its order, ints and times typed. */
function expected(source: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(source).map(([k, v]) => [
      k,
      ['offset', 'nodeId', 'lastDescendantNodeId'].includes(k) && typeof v === 'number'
        ? BigInt(v)
        : k === 'createdAt' && typeof v === 'string'
          ? new Date(v)
          : v,
    ]),
  );
}

describe('eventFieldsOf', () => {
  const wireCreated = ordered(
    { ...created(), contractKeyHash: '', representativePackageId: 'p', acsDelta: true },
    CREATED_ORDER,
  );
  const wireExercised = ordered(
    { ...exercised(), implementedInterfaces: [], acsDelta: false, interfaceId: null },
    EXERCISED_ORDER,
  );
  const reversed = (x: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(x).reverse());
  const extra = (x: Record<string, unknown>): Record<string, unknown> => ({
    ...x,
    newField: { a: 1 },
  });
  const fewer = (x: Record<string, unknown>): Record<string, unknown> => {
    const { acsDelta: _acsDelta, ...rest } = x;
    return rest;
  };
  /** The event as parseWireJson gives it when Canton sent `field` as `null`. */
  const without = (x: Record<string, unknown>, field: string): Record<string, unknown> =>
    Object.fromEntries(Object.entries(x).filter(([k]) => k !== field));
  const wireArchived = ordered({ ...archived(), implementedInterfaces: [] }, ARCHIVED_ORDER);

  it.each([
    ['a created event in the API order', wireCreated],
    ['an exercised event in the API order', wireExercised],
    ['a created event in another order', reversed(wireCreated)],
    ['an exercised event in another order', reversed(wireExercised)],
    ['a created event with a field this version does not know', extra(wireCreated)],
    ['an exercised event without a field', fewer(wireExercised)],
    [
      'a created event of a template without a key (no contractKey)',
      without(wireCreated, 'contractKey'),
    ],
    [
      'an exercised event of a template choice (no interfaceId)',
      without(wireExercised, 'interfaceId'),
    ],
    ['an archived event in the API order', wireArchived],
    ['an archived event in another order', reversed(wireArchived)],
    [
      'a created event without its key and another field',
      without(fewer(wireCreated), 'contractKey'),
    ],
    [
      'a created event with its key last (another order)',
      { ...without(wireCreated, 'contractKey'), contractKey: { k: 1 } },
    ],
    ['the fixtures', created() as unknown as Record<string, unknown>],
  ])('copies %s field for field, in its order, typed', (_name, source) => {
    const fields = eventFieldsOf(source as unknown as AnyEvent);
    expect(Object.keys(fields)).toEqual(Object.keys(source));
    expect(fields).toEqual(expected(source));
    expect(typeof fields.offset).toBe('bigint');
    // A copy: the wire event is not changed.
    expect(fields).not.toBe(source);
    expect(typeof source.offset).toBe('number');
  });
});
