/**
 * The one way JSON from the participant enters the client (HTTP bodies and websocket frames alike;
 * lint bans `JSON.parse` elsewhere in src/ledger). Canton prints an absent optional of an API
 * structure as `null` (NOTES.md, Corrections), while the generated wire types model it as a
 * missing `?:` field. Dropping those nulls here, once, makes the wire types true: `x === undefined`
 * on decoded data means "absent" whichever way the participant wrote it.
 *
 * Daml values are the exception: inside them `null` is Daml `None` (and a left-out trailing field
 * is `None` too), so they are kept verbatim, nulls included. Only a `null` standing for the whole
 * value of `contractKey` (the template has no key) or `viewValue` (the view failed; see
 * `viewStatus`) means "absent" and is dropped. A top-level `null` of `exerciseResult` is kept:
 * it is what a choice returning `Optional` sends for `None`.
 */
export function parseWireJson(text: string): unknown {
  // The parse result is fresh and unshared, so it is normalised in place where that is cheaper.
  return dropNulls(JSON.parse(text) as unknown);
}

/** The fields that carry Daml values (NOTES.md §0.12); nothing below them is touched. */
export const DAML_VALUE_FIELDS: ReadonlySet<string> = new Set([
  'createArgument',
  'createArguments',
  'choiceArgument',
  'exerciseResult',
  'contractKey',
  'viewValue',
]);

/** Daml-value fields whose top-level `null` says "there is none", not "None". */
const ABSENT_WHEN_NULL: ReadonlySet<string> = new Set(['contractKey', 'viewValue']);

function dropNulls(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    // Positions matter in arrays (tuples such as error resources): nulls stay, elements decode.
    const items = value as unknown[];
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item !== null && typeof item === 'object') items[i] = dropNulls(item);
    }
    return items;
  }
  const obj = value as Record<string, unknown>;
  let hasNull = false;
  // `for…in`, not Object.keys: JSON.parse makes plain objects with nothing enumerable inherited,
  // and for…in walks them without allocating the array of keys (about 2 KB per command).
  for (const key in obj) {
    const child = obj[key];
    if (child === null) {
      if (!DAML_VALUE_FIELDS.has(key) || ABSENT_WHEN_NULL.has(key)) hasNull = true;
    } else if (typeof child === 'object' && !DAML_VALUE_FIELDS.has(key)) {
      obj[key] = dropNulls(child);
    }
  }
  if (!hasNull) return obj;
  // A rebuilt object keeps a fast shape; `delete` would turn it into a dictionary.
  const out: Record<string, unknown> = {};
  for (const key in obj) {
    const child = obj[key];
    if (child === null && (!DAML_VALUE_FIELDS.has(key) || ABSENT_WHEN_NULL.has(key))) continue;
    // A "__proto__" key is data here, as JSON.parse made it; plain assignment would set the prototype.
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: child,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = child;
    }
  }
  return out;
}
