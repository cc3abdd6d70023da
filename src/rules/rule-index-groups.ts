import { parseDamlDate } from './cel/daml-time-text.js';
import type { EventTrigger } from './compiled-rule.js';
import type { IndexedRule, RuleGuard, RuleIndex } from './rule-index.js';

/**
 * Rules grouped so that one check skips many: the rules of one candidate list (an event's
 * trigger-matched rules, match-event.ts) whose guards (RuleGuard) test the same field in the same
 * way for the same party, such as `event.createArgument.currency == "…"`, are looked up by the
 * text the event holds there (a Map from that text to the rules it lets through), instead of each
 * rule asking its own guard. The others are counted as "a condition was false" once for the
 * whole group (GroupTally), and added to each rule's counters when the counts are read
 * (settleMatchCounts): they read exactly as one count per rule would.
 */

/** A rule as an event visits it: with the guards left to ask (all, or all but its group's). */
export type RuleVisit = {
  readonly entry: IndexedRule;
  readonly guards: readonly RuleGuard[];
  /** Already counted as matched and false by its group's hit (GroupTally.hits). */
  readonly counted: boolean;
};

export type RuleGroup = {
  /** Position in the groups of its index (GroupTally.hits). */
  readonly id: number;
  /** The guard read every member's chosen guard shares (RuleGuard.readId, fields). */
  readonly readId: number;
  readonly fields: readonly string[];
  /** Every member, each with all of its guards, in load order. */
  readonly members: readonly RuleVisit[];
  /** The members the text lets through, with their other guards; null: the text decides nothing. */
  readonly select: (
    text: string,
    parties: Readonly<Record<string, string>>,
  ) => readonly RuleVisit[] | null;
};

/** One step of an event's visit: a rule or a group, with the party whose view decides it. */
export type VisitItem = {
  /** The party's position in VisitPlan.aliases. */
  readonly aliasId: number;
  readonly rule: RuleVisit | null;
  readonly group: RuleGroup | null;
};

/** A candidate list as the events of its kind, template, package and choice visit it. */
export type VisitPlan = {
  /** Position in the plans of its index (GroupTally.ready). */
  readonly id: number;
  readonly items: readonly VisitItem[];
  readonly groups: readonly RuleGroup[];
  /** The party aliases of its rules, each once. */
  readonly aliases: readonly string[];
};

/** How a guard can share a lookup with others: the same field, party and kind of test. */
type Family =
  | { readonly kind: 'text' }
  | { readonly kind: 'date' }
  | { readonly kind: 'startsWith' | 'endsWith'; readonly length: number }
  | { readonly kind: 'party'; readonly alias: string };

function familyOf(guard: RuleGuard): Family | null {
  const expected = guard.expected;
  switch (expected.kind) {
    case 'text':
    case 'date':
      return { kind: expected.kind };
    case 'startsWith':
    case 'endsWith':
      return { kind: expected.kind, length: expected.text.length };
    case 'party':
      return { kind: 'party', alias: expected.alias };
    case 'contains':
    case 'threshold':
      return null;
  }
}

/** The texts a guard lets through, as its family's lookup keys. */
function keysOf(guard: RuleGuard): readonly string[] {
  const expected = guard.expected;
  switch (expected.kind) {
    case 'text':
      return expected.values;
    case 'date':
    case 'startsWith':
    case 'endsWith':
      return [expected.text];
    default:
      return [];
  }
}

const EMPTY: readonly RuleVisit[] = Object.freeze([]);

type GroupState = { nextId: number; nextPlanId: number; readonly byKey: Map<string, VisitPlan> };
const states = new WeakMap<RuleIndex, GroupState>();
const plansByList = new WeakMap<readonly IndexedRule[], VisitPlan>();

/**
 * The visit plan of a candidate list (every rule of which matches its events' trigger: only the
 * party's view is left to check). Remembered per list, and per index by the rules it holds, so
 * a list made again gets the same groups (and group ids).
 */
export function visitPlanOf(index: RuleIndex, list: readonly IndexedRule[]): VisitPlan {
  const known = plansByList.get(list);
  if (known !== undefined) return known;
  let state = states.get(index);
  if (state === undefined) {
    state = { nextId: 0, nextPlanId: 0, byKey: new Map() };
    states.set(index, state);
  }
  const key = list.map((e) => e.order).join(',');
  let plan = state.byKey.get(key);
  if (plan === undefined) {
    plan = buildPlan(list, state);
    state.byKey.set(key, plan);
  }
  plansByList.set(list, plan);
  return plan;
}

function groupKey(alias: string, guard: RuleGuard, family: Family): string {
  return JSON.stringify([alias, guard.readId, family]);
}

function buildPlan(list: readonly IndexedRule[], state: GroupState): VisitPlan {
  const aliasOf = (e: IndexedRule): string => (e.rule.trigger as EventTrigger).party;
  // How many rules of the list could join each group.
  const sizes = new Map<string, number>();
  const choices = list.map((e) =>
    e.guards
      .filter((g) => g.onWire)
      .flatMap((g) => {
        const family = familyOf(g);
        return family === null ? [] : [{ guard: g, family, key: groupKey(aliasOf(e), g, family) }];
      }),
  );
  for (const options of choices) {
    for (const key of new Set(options.map((o) => o.key))) sizes.set(key, (sizes.get(key) ?? 0) + 1);
  }
  type Draft = { family: Family; guard: RuleGuard; alias: string; members: IndexedRule[] };
  const drafts = new Map<string, Draft>();
  const draftOf: (Draft | null)[] = list.map((e, i) => {
    let best: (typeof choices)[number][number] | undefined;
    for (const option of choices[i]!) {
      if (best === undefined || sizes.get(option.key)! > sizes.get(best.key)!) best = option;
    }
    if (best === undefined || sizes.get(best.key)! < 2) return null;
    let draft = drafts.get(best.key);
    if (draft === undefined) {
      draft = { family: best.family, guard: best.guard, alias: aliasOf(e), members: [] };
      drafts.set(best.key, draft);
    }
    draft.members.push(e);
    return draft;
  });
  const groups = new Map<Draft, RuleGroup>();
  for (const draft of drafts.values()) {
    if (draft.members.length < 2) continue;
    groups.set(draft, makeGroup(state.nextId++, draft.family, draft.guard, draft.members));
  }
  const items: VisitItem[] = [];
  const placed = new Set<RuleGroup>();
  const aliases = [...new Set(list.map(aliasOf))];
  list.forEach((entry, i) => {
    const draft = draftOf[i];
    const group = draft === null || draft === undefined ? undefined : groups.get(draft);
    const aliasId = aliases.indexOf(aliasOf(entry));
    if (group === undefined) {
      items.push({ aliasId, rule: visitOf(entry, entry.guards, false), group: null });
    } else if (!placed.has(group)) {
      placed.add(group);
      items.push({ aliasId, rule: null, group });
    }
  });
  return Object.freeze({
    id: state.nextPlanId++,
    items: Object.freeze(items),
    groups: Object.freeze([...groups.values()]),
    aliases: Object.freeze(aliases),
  });
}

function visitOf(entry: IndexedRule, guards: readonly RuleGuard[], counted: boolean): RuleVisit {
  return Object.freeze({ entry, guards, counted });
}

/** A group of rules that share `guard`'s field, party and family (its first member's guard). */
function makeGroup(
  id: number,
  family: Family,
  sample: RuleGuard,
  entries: readonly IndexedRule[],
): RuleGroup {
  const members = entries.map((e) => visitOf(e, e.guards, false));
  /** Each member, through the guard of this group, with its other guards left to ask. */
  const guardOf = (e: IndexedRule): RuleGuard =>
    e.guards.find(
      (g) =>
        g.readId === sample.readId &&
        g.onWire &&
        JSON.stringify(familyOf(g)) === JSON.stringify(family),
    )!;
  const through = entries.map((e) => {
    const guard = guardOf(e);
    return {
      guard,
      visit: visitOf(
        e,
        e.guards.filter((g) => g !== guard),
        true,
      ),
    };
  });
  const base = { id, readId: sample.readId, fields: sample.fields, members };
  if (family.kind === 'party') {
    const all = Object.freeze(through.map((t) => t.visit));
    const alias = family.alias;
    return Object.freeze({
      ...base,
      select: (text: string, parties: Readonly<Record<string, string>>) => {
        const partyId: unknown = Object.hasOwn(parties, alias) ? parties[alias] : null;
        // A party alias the config lacks decides nothing (guardRejects).
        if (typeof partyId !== 'string') return null;
        return partyId === text ? all : EMPTY;
      },
    });
  }
  const byKey = new Map<string, RuleVisit[]>();
  for (const { guard, visit } of through) {
    for (const key of new Set(keysOf(guard))) {
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [visit]);
      else list.push(visit);
    }
  }
  for (const list of byKey.values()) Object.freeze(list);
  switch (family.kind) {
    case 'text':
      return Object.freeze({ ...base, select: (text: string) => byKey.get(text) ?? EMPTY });
    case 'date':
      // Another valid date text is another day; text that is not a date decides nothing.
      return Object.freeze({
        ...base,
        select: (text: string) => byKey.get(text) ?? (parseDamlDate(text) === null ? null : EMPTY),
      });
    case 'startsWith': {
      const length = family.length;
      return Object.freeze({
        ...base,
        select: (text: string) =>
          text.length < length ? EMPTY : (byKey.get(text.slice(0, length)) ?? EMPTY),
      });
    }
    case 'endsWith': {
      const length = family.length;
      return Object.freeze({
        ...base,
        select: (text: string) =>
          text.length < length ? EMPTY : (byKey.get(text.slice(text.length - length)) ?? EMPTY),
      });
    }
  }
}

/**
 * The group counts of one set of match counts (evaluate's MatchCounts): events where each group
 * was reached and its lookup decided (every member matched, and its condition counted false;
 * a member let through and evaluated takes its false back when it was not), and the groups whose
 * members were counted one by one once (so their counters exist, made in load order).
 */
export type GroupTally = {
  /** The index whose groups these are. */
  readonly index: RuleIndex;
  readonly groups: RuleGroup[];
  readonly hits: number[];
  readonly announced: boolean[];
  /** By plan id: every group of the plan is announced. */
  readonly ready: boolean[];
};

type SettledCounts = { readonly matched: Float64Array; readonly conditionsFalse: Float64Array };

const tallies = new WeakMap<SettledCounts, GroupTally>();

/** The group tally of `counts` for the groups of `index` (a fresh one for another index). */
export function tallyOf(counts: SettledCounts, index: RuleIndex): GroupTally {
  let tally = tallies.get(counts);
  if (tally === undefined || tally.index !== index) {
    if (tally !== undefined) settleTally(counts, tally);
    tally = { index, groups: [], hits: [], announced: [], ready: [] };
    tallies.set(counts, tally);
  }
  return tally;
}

/** Adds a group's hit (counted once per event) to its tally. */
export function countGroupHit(tally: GroupTally, group: RuleGroup): void {
  const id = group.id;
  if (tally.groups[id] === undefined) {
    tally.groups[id] = group;
    tally.hits[id] = 0;
  }
  tally.hits[id]! += 1;
}

/**
 * Moves the group hits into the per-rule counters: each member of a group hit `n` times matched
 * `n` more times, its condition false each time (evaluation took back the times it was not).
 */
export function settleTally(counts: SettledCounts, tally: GroupTally): void {
  for (let id = 0; id < tally.hits.length; id++) {
    const hits = tally.hits[id];
    if (hits === undefined || hits === 0) continue;
    for (const { entry } of tally.groups[id]!.members) {
      counts.matched[entry.order] = counts.matched[entry.order]! + hits;
      counts.conditionsFalse[entry.order] = counts.conditionsFalse[entry.order]! + hits;
    }
    tally.hits[id] = 0;
  }
}

export function settleMatchCountsOf(counts: SettledCounts): void {
  const tally = tallies.get(counts);
  if (tally !== undefined) settleTally(counts, tally);
}
