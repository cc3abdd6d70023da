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
 * rendering's parts) are written as their entries; a repeated value of the fields rules repeat
 * most is written once, in `shared` (see shareRepeats), and decoded once: the rules share it. Tagged values are one-key objects whose key
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

/** A repeated value this long (as JSON) or longer is written once, in `shared`. */
const MIN_SHARED_LENGTH = 24;

/**
 * The fields whose values rules and programs repeat most (a file's rules name a few templates
 * with the same options; programs read the same paths): only these are looked at, each value
 * written as JSON once, so that writing stays cheap.
 */
const SHARED_FIELDS: ReadonlySet<string> = new Set([
  'template',
  'options',
  'fieldReads',
  'labels',
  'variables',
  'reads',
  'result',
  'choiceArgument',
  'createArguments',
  'contractKey',
  'equalities',
  'comparisons',
  'guards',
]);

/**
 * `tree` (JSON data) with each value of a SHARED_FIELDS field that occurs more than once and is
 * not tiny written once, in `shared`, and referred to as `{"$s": index}`.
 */
function shareRepeats(tree: unknown): { tree: unknown; shared: unknown[] } {
  const counts = new Map<string, number>();
  const texts = new Map<object, string>();
  const count = (x: unknown): void => {
    if (typeof x !== 'object' || x === null) return;
    const entries: [string, unknown][] = Array.isArray(x)
      ? x.map((v: unknown): [string, unknown] => ['', v])
      : Object.entries(x);
    for (const [k, v] of entries) {
      if (typeof v !== 'object' || v === null) continue;
      if (SHARED_FIELDS.has(k)) {
        const text = JSON.stringify(v);
        texts.set(v, text);
        counts.set(text, (counts.get(text) ?? 0) + 1);
      } else {
        count(v);
      }
    }
  };
  count(tree);
  const shared: unknown[] = [];
  const index = new Map<string, number>();
  const emit = (x: unknown): unknown => {
    if (typeof x !== 'object' || x === null) return x;
    if (Array.isArray(x)) return x.map(emit);
    return Object.fromEntries(
      Object.entries(x).map(([k, v]: [string, unknown]) => {
        const text = typeof v === 'object' && v !== null ? texts.get(v) : undefined;
        if (text === undefined) return [k, emit(v)];
        if (counts.get(text)! < 2 || text.length < MIN_SHARED_LENGTH) return [k, v];
        let at = index.get(text);
        if (at === undefined) {
          at = shared.length;
          index.set(text, at);
          shared.push(v);
        }
        return [k, { $s: at }];
      }),
    );
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
