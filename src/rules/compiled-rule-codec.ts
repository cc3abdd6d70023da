import type { CelEnvironment } from './cel/cel-environment.js';
import type { CelProgram } from './cel/cel-program.js';
import { checkRuleSet, MalformedRuleSet } from './check-compiled-rule.js';
import type { RuleSet } from './compiled-rule.js';

/**
 * A compiled rule set as JSON text and back (the compiled rule cache, kept by the CLI in the
 * state directory), so that a start with unchanged inputs takes its rules as they were compiled
 * instead of compiling them again. Pure: text in, text out.
 *
 * The rules are plain data but for their CEL programs, which are written once each in a table
 * (`CelEnvironment.stored`: text, facts, closure form) and referred to by index; Maps (a
 * rendering's parts) are written as their entries; a repeated subtree is written once, in
 * `shared` (see shareRepeats), and decoded once: the rules share it, frozen. Tagged values are one-key objects whose key
 * starts with `$` (`{"$p": 3}` a program, `{"$s": 5}` a shared subtree, `{"$m": [...]}` a Map, `{"$o": [...]}` an object of
 * the rules with an own key that starts with `$` or is `__proto__`, as its entries), so no value of a rule reads as a tag.
 * A set holding anything else (a class instance, a number JSON cannot write) is not encoded.
 */

/** Why a rule set cannot be encoded, or its text decoded. */
export class RuleSetNotCoded extends Error {}

const FORMAT = 1;
/** Deeper than this, a value is neither written nor read (a rule's values are shallow). */
const MAX_DEPTH = 400;
/** More values than this, shared ones counted where used, are not read (1,000 rules: ~300,000). */
const MAX_EXPANDED = 50_000_000;

/** The set as text; throws RuleSetNotCoded when something in it cannot be written. */
export function encodeRuleSet(ruleSet: RuleSet, cel: CelEnvironment): string {
  const programs = new Map<CelProgram, number>();
  const stored: unknown[] = [];
  const encode = (x: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) throw new RuleSetNotCoded('nested too deep');
    if (typeof x === 'string' || typeof x === 'boolean' || x === null) return x;
    if (typeof x === 'number') {
      if (Number.isFinite(x) && !Object.is(x, -0)) return x;
      throw new RuleSetNotCoded(`the number ${x}`);
    }
    if (typeof x !== 'object') throw new RuleSetNotCoded(`a ${typeof x}`);
    if (Array.isArray(x)) {
      return x.map((item: unknown) => {
        if (item === undefined) throw new RuleSetNotCoded('a hole in a list');
        return encode(item, depth + 1);
      });
    }
    if (x instanceof Map) {
      return {
        $m: [...x].map(([k, v]: [unknown, unknown]) => {
          if (typeof k !== 'string') throw new RuleSetNotCoded('a Map key that is no text');
          return [k, encode(v, depth + 1)];
        }),
      };
    }
    if (typeof (x as CelProgram).evaluate === 'function') {
      const program = x as CelProgram;
      let index = programs.get(program);
      if (index === undefined) {
        const form = cel.stored(program);
        if (form === undefined) throw new RuleSetNotCoded('a program of another environment');
        index = stored.length;
        stored.push(form);
        programs.set(program, index);
      }
      return { $p: index };
    }
    if (Object.getPrototypeOf(x) !== Object.prototype) {
      throw new RuleSetNotCoded(`an instance of ${x.constructor.name}`);
    }
    const entries = Object.entries(x).filter(([, v]) => v !== undefined);
    if (entries.some(([k]) => isReserved(k))) {
      return { $o: entries.map(([k, v]) => [k, encode(v, depth + 1)]) };
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, encode(v, depth + 1)]));
  };
  const rules = encode(ruleSet.rules, 0);
  const warnings = encode(ruleSet.warnings, 0);
  const { tree, shared } = shareRepeats({ programs: stored, rules, warnings });
  return JSON.stringify({ format: FORMAT, shared, ...(tree as object) });
}

/** A repeated subtree this long (as JSON) or longer is written once, in `shared`. */
const MIN_SHARED_LENGTH = 24;

/**
 * `tree` (JSON data) with every subtree that occurs more than once and is not tiny written once,
 * in `shared`, and referred to as `{"$s": index}`: the rules of a file repeat template
 * references, options, field tries, parts of values and of programs. Linear: a subtree's key is
 * made of its children's ids, not of their text.
 */
function shareRepeats(tree: unknown): { tree: unknown; shared: unknown[] } {
  const ids = new Map<string, number>();
  const counts: number[] = [];
  const lengths: number[] = [];
  const idOf = new Map<object, number>();
  const key = (x: unknown): string => {
    if (typeof x !== 'object' || x === null) return JSON.stringify(x);
    const entries = Array.isArray(x)
      ? x.map((v: unknown) => key(v))
      : Object.entries(x).map(([k, v]) => `${JSON.stringify(k)}:${key(v)}`);
    const k = `${Array.isArray(x) ? '[' : '{'}${entries.join(',')}`;
    let id = ids.get(k);
    if (id === undefined) {
      id = ids.size;
      ids.set(k, id);
      counts.push(0);
      // The subtree's length as JSON, roughly: its own key with each child id as long as the
      // child is.
      lengths.push(
        (Array.isArray(x) ? (x as unknown[]) : Object.values(x)).reduce<number>(
          (n: number, v: unknown) =>
            n + (typeof v === 'object' && v !== null ? lengths[idOf.get(v)!]! : 0),
          k.length,
        ),
      );
    }
    counts[id]! += 1;
    idOf.set(x, id);
    return `#${id}`;
  };
  key(tree);
  const shared: unknown[] = [];
  const index = new Map<number, number>();
  const emit = (x: unknown): unknown => {
    if (typeof x !== 'object' || x === null) return x;
    const id = idOf.get(x)!;
    const inner = (): unknown =>
      Array.isArray(x)
        ? x.map(emit)
        : Object.fromEntries(Object.entries(x).map(([k, v]) => [k, emit(v)]));
    if (counts[id]! < 2 || lengths[id]! < MIN_SHARED_LENGTH) return inner();
    let at = index.get(id);
    if (at === undefined) {
      at = shared.length;
      index.set(id, at);
      shared.push(null);
      shared[at] = inner();
    }
    return { $s: at };
  };
  return { tree: emit(tree), shared };
}

/**
 * The set `encodeRuleSet` wrote, frozen (a Map too, though not its entries, as deepFreeze leaves it), with its programs restored by `cel` (without parsing or
 * checking). Throws RuleSetNotCoded for any text that is not such a set: not JSON, another
 * format, too deep, a bad tag, a malformed program, rule or warning (check-compiled-rule.ts).
 */
export function decodeRuleSet(text: string, cel: CelEnvironment): RuleSet {
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    if (typeof json !== 'object' || json === null || json.format !== FORMAT) {
      throw new RuleSetNotCoded('another format');
    }
    if (!Array.isArray(json.programs) || !Array.isArray(json.shared)) {
      throw new RuleSetNotCoded('no programs');
    }
    const shared = json.shared as unknown[];
    const sharedValues: unknown[] = [];
    const sharedSizes: number[] = [];
    let programs: CelProgram[] = [];
    // What the set holds with every shared subtree counted where it is used: bounds the walks
    // after the decode (a hostile file could share a subtree twice at every level).
    let expanded = 0;
    const decode = (x: unknown, depth: number): unknown => {
      if (depth > MAX_DEPTH) throw new RuleSetNotCoded('nested too deep');
      if ((expanded += 1) > MAX_EXPANDED) throw new RuleSetNotCoded('too large');
      if (typeof x !== 'object' || x === null) return x;
      if (Array.isArray(x)) return Object.freeze(x.map((item: unknown) => decode(item, depth + 1)));
      const o = x as Record<string, unknown>;
      const keys = Object.keys(o);
      if (keys.length === 1 && keys[0]!.startsWith('$')) {
        const tagged = o[keys[0]!];
        if (keys[0] === '$s') {
          if (typeof tagged !== 'number' || !Number.isInteger(tagged)) throw bad('$s');
          if (!(tagged >= 0 && tagged < shared.length)) throw bad('$s');
          if (sharedValues[tagged] === undefined) {
            const before = expanded;
            sharedValues[tagged] = decode(shared[tagged], depth + 1);
            sharedSizes[tagged] = expanded - before;
          } else {
            expanded += sharedSizes[tagged]!;
          }
          return sharedValues[tagged];
        }
        if (keys[0] === '$p') {
          if (typeof tagged !== 'number' || !Number.isInteger(tagged)) throw bad('$p');
          const program = programs[tagged];
          if (program === undefined) throw bad('$p');
          return program;
        }
        // The entries, decoded (an entry, or the list, may be a shared subtree).
        const list = decode(tagged, depth + 1);
        if (!Array.isArray(list)) throw bad(keys[0]!);
        const entries = list.map((e: unknown): [string, unknown] => {
          if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== 'string') {
            throw bad(keys[0]!);
          }
          return [e[0], e[1]];
        });
        if (keys[0] === '$m') return Object.freeze(new Map(entries));
        if (keys[0] === '$o') return Object.freeze(Object.fromEntries(entries));
        throw bad(keys[0]!);
      }
      for (const k of keys) {
        if (isReserved(k)) throw bad(k);
        o[k] = decode(o[k], depth + 1);
      }
      return Object.freeze(o);
    };
    programs = (decode(json.programs, 0) as unknown[]).map((p) => cel.restore(p));
    // Frozen as it is decoded (but the programs): one walk instead of two.
    return checkRuleSet(
      Object.freeze({ rules: decode(json.rules, 0), warnings: decode(json.warnings, 0) }),
    );
  } catch (error) {
    if (error instanceof RuleSetNotCoded) throw error;
    // Not JSON, a malformed program or rule, a stack overflow on hostile nesting: all refused.
    throw new RuleSetNotCoded((error as Error).message, { cause: error });
  }
}

/** Keys written as entries: tags, and `__proto__` (assigning it would set the prototype). */
function isReserved(key: string): boolean {
  return key.startsWith('$') || key === '__proto__';
}

function bad(tag: string): MalformedRuleSet {
  return new MalformedRuleSet(`a malformed ${tag}`);
}
