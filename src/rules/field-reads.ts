import { EVERY_ITEM, type ReadPath, type ReadSegment } from './cel/read-paths.js';

/**
 * Canton 3.5 leaves trailing `None` fields out of the records it sends (createArgument,
 * choiceArgument, exerciseResult, contractKey, interface views, recursively); the participant
 * never leaves out any other field. So `event.createArgument.note == null` would fail with
 * "No such key" on a real participant and work on one that sends `null`. To read the same
 * everywhere, every field path a rule reads below a Daml value is collected when the rule is
 * compiled (a FieldTrie), and before the rule runs, each such field the record lacks is made
 * `null`, on a copy.
 */

/**
 * The field paths read below one variable (`event` or `contract`), merged into a tree.
 * `fillable` nodes are Daml record fields (made `null` when missing); the others are the API
 * structure above the Daml value (`createArgument`, `interfaceViews[].viewValue`), which is never
 * made up.
 */
export type FieldTrie = {
  readonly fillable: boolean;
  /** By segment name (a field name or EVERY_ITEM). */
  readonly children: readonly (readonly [string, FieldTrie])[];
};

/**
 * The fields of an event or an active contract that hold Daml values (`view`: the interface view
 * of an interface rule's event, see evaluate.ts).
 */
const VALUE_ROOTS: ReadonlySet<string> = new Set([
  'createArgument',
  'view',
  'choiceArgument',
  'exerciseResult',
  'contractKey',
]);

/**
 * How many leading segments of `segments` are API structure above a Daml value: 1 for
 * `createArgument` and its siblings, 3 for `interfaceViews[i].viewValue`; null when the path does
 * not lead into a Daml value.
 */
export function valueRootLength(segments: readonly ReadSegment[]): number | null {
  const first = segments[0]?.name;
  if (first === undefined) return null;
  if (VALUE_ROOTS.has(first)) return 1;
  if (
    first === 'interfaceViews' &&
    segments[1]?.name === EVERY_ITEM &&
    segments[2]?.name === 'viewValue'
  ) {
    return 3;
  }
  return null;
}

type MutableTrie = { fillable: boolean; children: Map<string, MutableTrie> };

/**
 * The trie of the paths below `variable` that lead into a Daml value; null when there are none
 * (the rule reads no Daml field, so nothing needs filling).
 */
export function fieldTrieOf(paths: readonly ReadPath[], variable: string): FieldTrie | null {
  const root: MutableTrie = { fillable: false, children: new Map() };
  let any = false;
  for (const path of paths) {
    if (path.variable !== variable) continue;
    const rootLength = valueRootLength(path.segments);
    if (rootLength === null || path.segments.length <= rootLength) continue;
    any = true;
    let node = root;
    path.segments.forEach((segment, i) => {
      let child = node.children.get(segment.name);
      if (child === undefined) {
        child = { fillable: i >= rootLength, children: new Map() };
        node.children.set(segment.name, child);
      }
      node = child;
    });
  }
  return any ? freeze(root) : null;
}

/** The union of several tries (the rules that see one event); null when all are null. */
export function mergeFieldTries(
  tries: readonly (FieldTrie | null | undefined)[],
): FieldTrie | null {
  const present = tries.filter((t): t is FieldTrie => t !== null && t !== undefined);
  if (present.length === 0) return null;
  if (present.length === 1) return present[0]!;
  const root: MutableTrie = { fillable: false, children: new Map() };
  const add = (into: MutableTrie, from: FieldTrie): void => {
    for (const [name, child] of from.children) {
      let target = into.children.get(name);
      if (target === undefined) {
        target = { fillable: child.fillable, children: new Map() };
        into.children.set(name, target);
      }
      add(target, child);
    }
  };
  for (const trie of present) add(root, trie);
  return freeze(root);
}

function freeze(node: MutableTrie): FieldTrie {
  return Object.freeze({
    fillable: node.fillable,
    children: Object.freeze(
      [...node.children].map(([name, child]) => Object.freeze([name, freeze(child)] as const)),
    ),
  });
}

/** A plain object (as CEL reads a JSON object), not a list, Map or class instance. */
export function isPlainRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `value` with every fillable field of `trie` that a record lacks set to `null`. Copy on write:
 * the value given is never changed, and comes back as is when nothing was missing. Fields that
 * are present are kept, `null` or not; a path through `null`, text or a number stops there.
 */
export function fillMissingFields(value: unknown, trie: FieldTrie): unknown {
  if (Array.isArray(value)) {
    const item = childOf(trie, EVERY_ITEM);
    if (item === undefined) return value;
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const before: unknown = value[i];
      const after = fillMissingFields(before, item);
      if (after !== before) {
        copy ??= [...(value as unknown[])];
        copy[i] = after;
      }
    }
    return copy ?? value;
  }
  if (!isPlainRecord(value)) return value;
  let copy: Record<string, unknown> | undefined;
  // Indexed, without destructuring (see eventFieldsOf): this runs for every event.
  const children = trie.children;
  for (let c = 0; c < children.length; c++) {
    const name = children[c]![0];
    const child = children[c]![1];
    if (name === EVERY_ITEM) {
      // `m[key].field` on a TextMap: every value of the map.
      for (const key of Object.keys(value)) {
        const before = (copy ?? value)[key];
        const after = fillMissingFields(before, child);
        if (after !== before) {
          copy ??= { ...value };
          copy[key] = after;
        }
      }
      continue;
    }
    if (Object.hasOwn(value, name)) {
      const before = (copy ?? value)[name];
      const after = fillMissingFields(before, child);
      if (after !== before) {
        copy ??= { ...value };
        copy[name] = after;
      }
    } else if (child.fillable) {
      copy ??= { ...value };
      copy[name] = null;
    }
  }
  return copy ?? value;
}

function childOf(trie: FieldTrie, name: string): FieldTrie | undefined {
  const children = trie.children;
  for (let c = 0; c < children.length; c++) if (children[c]![0] === name) return children[c]![1];
  return undefined;
}
