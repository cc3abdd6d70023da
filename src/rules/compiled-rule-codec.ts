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
 * rendering's parts) are written as their entries. Tagged values are one-key objects whose key
 * starts with `$` (`{"$p": 3}` a program, `{"$m": [...]}` a Map, `{"$o": [...]}` an object of
 * the rules with an own key that starts with `$` or is `__proto__`, as its entries), so no value of a rule reads as a tag.
 * A set holding anything else (a class instance, a number JSON cannot write) is not encoded.
 */

/** Why a rule set cannot be encoded, or its text decoded. */
export class RuleSetNotCoded extends Error {}

const FORMAT = 1;
/** Deeper than this, a value is neither written nor read (a rule's values are shallow). */
const MAX_DEPTH = 400;

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
  return JSON.stringify({ format: FORMAT, programs: stored, rules, warnings });
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
    if (!Array.isArray(json.programs)) throw new RuleSetNotCoded('no programs');
    const programs = json.programs.map((p: unknown) => cel.restore(p));
    const decode = (x: unknown, depth: number): unknown => {
      if (depth > MAX_DEPTH) throw new RuleSetNotCoded('nested too deep');
      if (typeof x !== 'object' || x === null) return x;
      if (Array.isArray(x)) return Object.freeze(x.map((item: unknown) => decode(item, depth + 1)));
      const o = x as Record<string, unknown>;
      const keys = Object.keys(o);
      if (keys.length === 1 && keys[0]!.startsWith('$')) {
        const tagged = o[keys[0]!];
        if (keys[0] === '$p') {
          if (typeof tagged !== 'number' || !Number.isInteger(tagged)) throw bad('$p');
          const program = programs[tagged];
          if (program === undefined) throw bad('$p');
          return program;
        }
        if (!Array.isArray(tagged)) throw bad(keys[0]!);
        const entries = tagged.map((e: unknown): [string, unknown] => {
          if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== 'string') {
            throw bad(keys[0]!);
          }
          return [e[0], decode(e[1], depth + 1)];
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
