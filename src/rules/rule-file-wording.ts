import type { ErrorObject } from 'ajv';
import type { YamlPath } from '../core/yaml-locator.js';
import { closestMatch } from '../core/source/closest-match.js';
import type { SchemaProblem, SchemaWording } from '../core/source/index.js';
import type { RuleProblemCode } from './rule-problem.js';
import { COMMAND_KINDS, RULE_LIMITS, RULE_PATTERNS, TRIGGER_KINDS } from './rule-language.js';

type Problem = SchemaProblem<RuleProblemCode>;

/** "rules[0].then[1].actAs" → "actAs"; list items are named after their list. */
function fieldName(path: YamlPath): string {
  for (let i = path.length - 1; i >= 0; i--) {
    const p = path[i];
    if (typeof p === 'string') return p;
  }
  return 'the file';
}

/** "at the top of the file", "in the rule", "in the action", "in `retry`", ... */
function placeName(path: YamlPath): string {
  if (path.length === 0) return 'at the top of the file';
  const last = path[path.length - 1];
  if (typeof last === 'number') {
    const list = path[path.length - 2];
    return list === 'rules'
      ? 'in the rule'
      : list === 'then'
        ? 'in the action'
        : `in an item of \`${String(list)}\``;
  }
  return `in \`${last}\``;
}

function isTextList(data: unknown): boolean {
  return Array.isArray(data) && data.every((x) => typeof x === 'string');
}

function describeType(data: unknown): string {
  if (data === null) return 'empty';
  if (Array.isArray(data)) return 'a list';
  if (typeof data === 'object') return 'a mapping';
  if (typeof data === 'string') return `the text "${truncate(data)}"`;
  if (typeof data === 'number') return `the number ${data}`;
  return `the value ${JSON.stringify(data) ?? 'undefined'}`;
}

function truncate(s: string, max = 40): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** Explains why a rule id is not a slug, naming look-alike (confusable) characters. */
function explainRuleId(id: string): { message: string; hint?: string } {
  const foreign = [...id].find((ch) => ch.codePointAt(0)! > 0x7e);
  if (foreign !== undefined) {
    const cp = foreign.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    return {
      message: `rule id "${id}" contains the non-ASCII character "${foreign}" (U+${cp}); ids are ASCII only, so look-alike letters cannot hide in them`,
      hint: 'retype the id using only a-z, 0-9, - and _',
    };
  }
  const slug = id
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|-+$/g, '');
  return {
    message: `rule id "${id}" is not a slug: use lowercase letters, digits, - and _, starting with a letter or digit`,
    ...(slug !== '' && slug !== id ? { hint: `did you mean "${slug}"?` } : {}),
  };
}

/**
 * What a string failing each pattern is not, and what to write instead: `"<text>" is not <what>`.
 * `max`: how much of the text is shown, 40 characters unless said.
 */
const PATTERN_WORDS: Readonly<
  Record<string, { code: RuleProblemCode; what: string; hint: string; max?: number }>
> = {
  [RULE_PATTERNS.TEMPLATE_REF]: {
    code: 'BAD_TEMPLATE_REF',
    what: 'a template reference',
    hint: 'write "#package-name:Module:Entity", e.g. "#invoices:Invoice:Invoice" (quote it: # starts a comment in YAML)',
    max: 80,
  },
  [RULE_PATTERNS.DURATION]: {
    code: 'BAD_DURATION',
    what: 'a duration',
    hint: 'write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m',
    max: Number.POSITIVE_INFINITY,
  },
  [RULE_PATTERNS.PARTY_ALIAS]: {
    code: 'BAD_VALUE',
    what: 'a party alias',
    hint: 'use the alias from `parties:` in bot.config.yaml (letters, digits, - and _), not the party id',
  },
  [RULE_PATTERNS.CHOICE]: {
    code: 'BAD_VALUE',
    what: 'a choice name',
    hint: 'write the choice as in Daml, e.g. Accept',
  },
};

function patternProblem(
  pattern: string,
  data: unknown,
  path: YamlPath,
): Pick<Problem, 'code' | 'message' | 'hint'> {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  if (pattern === RULE_PATTERNS.RULE_ID) return { code: 'BAD_RULE_ID', ...explainRuleId(text) };
  const words = PATTERN_WORDS[pattern];
  if (words === undefined) {
    return { code: 'BAD_VALUE', message: `"${truncate(text)}" is not a valid ${fieldName(path)}` };
  }
  return {
    code: words.code,
    message: `"${truncate(text, words.max)}" is not ${words.what}`,
    hint: words.hint,
  };
}

function keysOf(data: unknown): string[] {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? Object.keys(data) : [];
}

function list(words: readonly string[]): string {
  return words.map((w) => `\`${w}\``).join(', ');
}

/** The oneOf of `template:` or `interface:` (commands, `exercised`). */
const REFERENCE_ONE_OF =
  /\/properties\/(exercised|createAndExercise|create|exercise|exerciseByKey)\/oneOf$/;

function oneOfProblem(e: ErrorObject, path: YamlPath): Omit<Problem, 'path' | 'key'> {
  const keys = keysOf(e.data);
  if (REFERENCE_ONE_OF.test(e.schemaPath)) {
    return keys.includes('template') && keys.includes('interface')
      ? {
          code: 'SCHEMA',
          message: `\`${fieldName(path)}\` has both \`template\` and \`interface\`; give one`,
          hint: '`interface:` exercises an interface choice on any contract that implements it; `template:` names the template',
        }
      : {
          code: 'MISSING_KEY',
          message: `\`${fieldName(path)}\` has no \`template\``,
          hint: 'add `template: "#pkg:Module:Entity"` (or `interface:` for a choice of an interface)',
        };
  }
  const options = e.schemaPath.endsWith('/items/oneOf')
    ? e.schemaPath.includes('/then/')
      ? COMMAND_KINDS
      : ['on', 'schedule']
    : e.schemaPath.endsWith('/on/oneOf')
      ? TRIGGER_KINDS
      : [];
  const present = options.filter((k) => keys.includes(k));
  if (options === COMMAND_KINDS) {
    return present.length === 0
      ? {
          code: 'MISSING_KEY',
          message: 'the action has no command',
          hint: `add one of ${list(COMMAND_KINDS)}`,
        }
      : {
          code: 'SCHEMA',
          message: `the action has ${present.length} commands (${present.join(', ')}); an action submits exactly one`,
          hint: 'split it into one action per command',
        };
  }
  if (options === TRIGGER_KINDS) {
    return present.length === 0
      ? {
          code: 'TRIGGER',
          message: '`on` says nothing to react to',
          hint: 'add one of `created: "#pkg:Module:Entity"`, `exercised: {template, choice}` or `archived: "#pkg:Module:Entity"`',
        }
      : {
          code: 'TRIGGER',
          message: `\`on\` has ${present.length} triggers (${present.join(', ')}); a rule reacts to exactly one`,
          hint: 'make one rule per trigger',
        };
  }
  if (options.length === 2) {
    return present.length === 0
      ? {
          code: 'TRIGGER',
          message: 'the rule has no trigger',
          hint: 'add `on:` (created, exercised or archived) to react to events, or `schedule:` to run on a cron schedule',
        }
      : {
          code: 'TRIGGER',
          message: 'the rule has both `on` and `schedule`; a rule has exactly one trigger',
          hint: 'make two rules',
        };
  }
  return { code: 'SCHEMA', message: `${fieldName(path)}: ${e.message ?? 'is not valid'}` };
}

function requiredProblem(missing: string, path: YamlPath): Omit<Problem, 'path' | 'key'> {
  const where = path.length === 0 ? 'the file' : fieldName(path);
  switch (missing) {
    case 'version':
      return {
        code: 'MISSING_KEY',
        message: '`version` is missing',
        hint: 'start the file with `version: 1`',
      };
    case 'rules':
      return {
        code: 'MISSING_KEY',
        message: '`rules` is missing',
        hint: 'add `rules:` with a list of rules',
      };
    case 'id':
      return {
        code: 'MISSING_KEY',
        message: 'the rule has no `id`',
        hint: 'add `id: some-slug`; it must stay stable, it is part of every command id',
      };
    case 'then':
      return {
        code: 'MISSING_KEY',
        message: 'the rule has no `then`',
        hint: 'add `then:` with a list of actions (createAndExercise, create, exercise or exerciseByKey)',
      };
    case 'actAs':
      return {
        code: 'MISSING_KEY',
        message: 'the action has no `actAs`',
        hint: 'add `actAs: [alias]`: the party alias(es) that submit the command',
      };
    case 'party':
      return {
        code: 'MISSING_KEY',
        message: `\`${where}\` has no \`party\``,
        hint: 'add `party: alias`: the party whose view of the ledger the rule reads',
      };
    default:
      return { code: 'MISSING_KEY', message: `\`${where}\` has no \`${missing}\`` };
  }
}

/** The paths of mappings with an unknown key that looks like a command or trigger. */
function typoKeyPaths(errors: readonly ErrorObject[]): Set<string> {
  const out = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'additionalProperties') continue;
    const key = String((e.params as { additionalProperty?: unknown }).additionalProperty);
    if (closestMatch(key, [...COMMAND_KINDS, ...TRIGGER_KINDS, 'on', 'schedule']) !== undefined) {
      out.add(e.instancePath);
    }
  }
  return out;
}

/** The rule language's own words for what the generic ones would say less well. */
function explainRuleFileError(
  e: ErrorObject,
  path: YamlPath,
  all: readonly ErrorObject[],
): Problem | null | undefined {
  const params = e.params as Record<string, unknown>;
  const at = (p: Omit<Problem, 'path' | 'key'>): Problem => ({ path, key: false, ...p });
  switch (e.keyword) {
    case 'additionalProperties':
    case 'enum':
      return undefined;
    case 'type':
      return path.length === 0
        ? at({
            code: 'WRONG_TYPE',
            message:
              e.data === null
                ? 'the file is empty'
                : `the file must be a mapping, not ${describeType(e.data)}`,
            hint: 'a rule file starts with `version: 1` and then `rules:`',
          })
        : undefined;
    case 'required':
      return at(requiredProblem(String(params.missingProperty), path));
    case 'oneOf':
      // An unknown key that looks like a command or trigger explains "no command" better.
      return typoKeyPaths(all).has(e.instancePath) ? null : at(oneOfProblem(e, path));
    case 'anyOf':
      if (fieldName(path) !== 'when') {
        return at({
          code: 'WRONG_TYPE',
          message:
            'a disclosed contract is "${{ expr }}" or a mapping with contractId and createdEventBlob',
        });
      }
      // Text that is only too long: the loader reports its length, with the place.
      if (typeof e.data === 'string' || isTextList(e.data)) return null;
      return at({
        code: 'WRONG_TYPE',
        message: `\`when\` must be a CEL expression (text) or a list of them, not ${describeType(e.data)}`,
        ...(typeof e.data === 'boolean'
          ? {
              hint: `YAML read ${String(e.data)} as a boolean: quote it, when: "${String(e.data)}"; a rule without \`when\` fires on every event it matches`,
            }
          : {}),
      });
    case 'const':
      return at({
        code: 'UNSUPPORTED_VERSION',
        message: `version ${describeType(e.data).replace(/^the (number|value|text) /, '')} is not supported`,
        hint: 'write `version: 1`, the only version of the rule language so far',
      });
    case 'pattern':
      return at(patternProblem(String(params.pattern), e.data, path));
    case 'propertyNames':
      return {
        path: [...path, String(params.propertyName)],
        key: true,
        code: 'BAD_VALUE',
        message: `"${String(params.propertyName)}" is not a valid label name`,
        hint: 'use letters, digits, _, . and -, starting with a letter',
      };
    case 'minItems':
      return at({
        code: 'BAD_VALUE',
        message: `\`${fieldName(path)}\` is empty`,
        hint:
          fieldName(path) === 'then'
            ? 'give at least one action; to switch a rule off, write `enabled: false`'
            : 'give at least one entry',
      });
    case 'maxLength':
      return fieldName(path) === 'id'
        ? at({
            code: 'BAD_RULE_ID',
            message: `rule id is ${String(e.data).length} characters long; at most ${RULE_LIMITS.RULE_ID_MAX} are allowed`,
            hint: 'the id is part of every command id, which the ledger caps at 255 characters',
          })
        : at({
            code: 'BAD_VALUE',
            message: `\`${fieldName(path)}\` is longer than ${String(params.limit)} characters`,
          });
    default:
      return at({
        code: 'SCHEMA',
        message: `\`${fieldName(path)}\` ${e.message ?? 'is not valid'}`,
      });
  }
}

/**
 * How rule files word schema problems (see core/source): fields by their own name ("`actAs`"),
 * places by what they are ("in the rule", "in the action"), values by kind ("the number 5").
 */
export const RULE_FILE_WORDING: SchemaWording<RuleProblemCode> = {
  field: (path) => `\`${fieldName(path)}\``,
  place: placeName,
  value: describeType,
  explain: explainRuleFileError,
};
