import type { ErrorObject } from 'ajv';
import { ajvInstancePath } from '../ajv-instance-path.js';
import { ajvTypeWords } from '../ajv-type-words.js';
import { schemaPropertyNames } from '../schema-property-names.js';
import type { YamlPath } from '../yaml-locator.js';
import { closestMatch } from './closest-match.js';
import type { SourceProblemCode } from './source-problem.js';

/** A schema violation in words, before it has a position; `key`: point at the key, not the value. */
export type SchemaProblem<C extends string = SourceProblemCode> = {
  readonly path: YamlPath;
  readonly key: boolean;
  readonly code: C | SourceProblemCode;
  readonly message: string;
  readonly hint?: string;
};

/** How one loader words schema problems; every entry is optional. */
export type SchemaWording<C extends string = SourceProblemCode> = {
  /** Field values that are never shown (tokens, passwords): messages say "the (secret) value". */
  readonly secret?: (path: YamlPath) => boolean;
  /** A field in messages; default its dotted path in backticks (`ledger.auth.type`). */
  readonly field?: (path: YamlPath) => string;
  /** Where an unknown key sits; default "at the top of the file" or "in <field>". */
  readonly place?: (path: YamlPath) => string;
  /** A value in messages; default `"text"`, 5, a list, a mapping, empty. */
  readonly value?: (data: unknown, path: YamlPath) => string;
  /**
   * What a key that fails the mapping's `propertyNames` is not (the config's party aliases); by
   * default "is not a valid name" and where.
   */
  readonly badName?: (name: string, path: YamlPath) => { message: string; hint?: string };
  /** Hints for a missing key, by its name. */
  readonly missingHints?: Readonly<Record<string, string>>;
  /**
   * What a string that fails a `pattern` should be, by the pattern's source: the message becomes
   * "<field>: <value> is not <what>".
   */
  readonly patterns?: Readonly<Record<string, { what: string; hint?: string; code?: C }>>;
  /**
   * How a value that matches none of a `oneOf`/`anyOf`'s forms is explained: `summary` (the
   * default) says just that; `most-telling` explains instead the error inside the alternatives
   * that best tells what is wrong (the deepest, a named key before a type mismatch).
   */
  readonly alternatives?: 'summary' | 'most-telling';
  /**
   * The loader's own explanation of one error: a problem, null to drop the error (another one
   * explains it), or undefined for the default wording. `all` is every error of the check.
   */
  readonly explain?: (
    error: ErrorObject,
    path: YamlPath,
    all: readonly ErrorObject[],
  ) => SchemaProblem<C> | null | undefined;
};

/** `ledger.auth.type`, `rules[1].id`. */
export function dottedPath(path: YamlPath): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function defaultField(path: YamlPath): string {
  return path.length === 0 ? 'the file' : `\`${dottedPath(path)}\``;
}

/** A value for a message: short, and never more than 60 characters of text. */
export function describeValue(data: unknown): string {
  if (data === null || data === undefined) return 'empty';
  if (Array.isArray(data)) return 'a list';
  if (typeof data === 'object') return 'a mapping';
  if (typeof data === 'string') return `"${data.length > 60 ? `${data.slice(0, 60)}…` : data}"`;
  return JSON.stringify(data) ?? 'a value';
}

/**
 * Turns ajv's errors (allErrors, verbose) into one problem per real mistake, in the loader's
 * words. Errors inside a `oneOf`/`anyOf` branch are dropped when the combinator failed as a
 * whole: its own error is explained instead (by default generically; loaders know what their
 * branches mean). With ajv's `discriminator`, the tag picks the one branch checked and there is
 * no combinator error: that branch's errors are the real ones, and are kept.
 */
export function explainSchemaErrors<C extends string = SourceProblemCode>(
  errors: readonly ErrorObject[],
  wording: SchemaWording<C> = {},
): SchemaProblem<C>[] {
  const field = wording.field ?? defaultField;
  const place =
    wording.place ??
    ((path: YamlPath) => (path.length === 0 ? 'at the top of the file' : `in ${field(path)}`));
  const secret = wording.secret ?? (() => false);
  const value = (data: unknown, path: YamlPath): string =>
    secret(path) ? 'the (secret) value' : (wording.value ?? describeValue)(data, path);
  const out: SchemaProblem<C>[] = [];
  const seen = new Set<string>();
  const failedCombinators = new Set(errors.filter(isCombinator).map((e) => e.schemaPath));
  for (const found of errors) {
    if (inFailedBranch(found, failedCombinators) || found.schemaPath.includes('/propertyNames/')) {
      continue;
    }
    const e =
      wording.alternatives === 'most-telling' && isCombinator(found)
        ? (mostTellingAlternativeError(found, errors) ?? found)
        : found;
    const path = ajvInstancePath(e);
    const own = wording.explain?.(e, path, errors);
    if (own === null) continue;
    const problem = own ?? defaultProblem(e, path, { field, place, value, secret, wording });
    if (problem === null) continue;
    const dedup = `${problem.path.join('/')}|${problem.message}`;
    if (seen.has(dedup)) continue;
    seen.add(dedup);
    out.push(problem);
  }
  return out;
}

function isCombinator(e: ErrorObject): boolean {
  return e.keyword === 'oneOf' || e.keyword === 'anyOf';
}

function isUnder(root: string, path: string): boolean {
  return root === '' || path === root || path.startsWith(`${root}/`);
}

/**
 * The error that best tells what is wrong in a value that matches none of a combinator's forms
 * (a type, a value, a list): the deepest one, a named key before a `type` summary, and a bad
 * key name before an unknown key (a bad name in a record says more than another form's "unknown
 * key").
 */
function mostTellingAlternativeError(
  combinator: ErrorObject,
  all: readonly ErrorObject[],
): ErrorObject | undefined {
  const depth = (e: ErrorObject): number => ajvInstancePath(e).length;
  const vague = (e: ErrorObject): number => Number(e.keyword === 'type');
  const ranked = all
    .filter((e) => !isCombinator(e) && isUnder(combinator.instancePath, e.instancePath))
    .filter((e) => !e.schemaPath.endsWith('/propertyNames/pattern'))
    .sort((a, b) => depth(b) - depth(a) || vague(a) - vague(b));
  return (
    ranked.find((e) => e.keyword === 'propertyNames') ??
    ranked.find((e) => e.keyword === 'additionalProperties') ??
    ranked[0]
  );
}

/** Whether `e` sits inside a branch of a oneOf/anyOf (at any depth) that failed as a whole. */
function inFailedBranch(e: ErrorObject, failed: ReadonlySet<string>): boolean {
  for (const m of e.schemaPath.matchAll(/\/(oneOf|anyOf)\/\d+/g)) {
    if (failed.has(e.schemaPath.slice(0, m.index + m[1]!.length + 1))) return true;
  }
  return false;
}

type Words<C extends string> = {
  readonly field: (path: YamlPath) => string;
  readonly place: (path: YamlPath) => string;
  readonly value: (data: unknown, path: YamlPath) => string;
  readonly secret: (path: YamlPath) => boolean;
  readonly wording: SchemaWording<C>;
};

/**
 * The problem of a key the schema does not allow there (ajv's `additionalProperties`), pointed at
 * the key: hinted with the closest allowed key (`didYouMean`), else with the keys allowed there.
 * `message` and `didYouMean` word it (rule test files word it their own way).
 */
export function unknownKeyProblem<C extends string>(
  e: ErrorObject,
  path: YamlPath,
  message: (key: string) => string,
  didYouMean: (guess: string) => string,
): SchemaProblem<C> {
  const key = String((e.params as { additionalProperty?: unknown }).additionalProperty);
  const allowed = schemaPropertyNames(e.parentSchema);
  const guess = closestMatch(key, allowed);
  return {
    path: [...path, key],
    key: true,
    code: 'UNKNOWN_KEY',
    message: message(key),
    hint: guess === undefined ? `allowed here: ${allowed.join(', ')}` : didYouMean(guess),
  };
}

const BOUND_WORDS: Readonly<Record<string, string>> = {
  minimum: 'at least',
  maximum: 'at most',
  exclusiveMinimum: 'more than',
  exclusiveMaximum: 'less than',
};

function didYouMean(guess: string | undefined): { hint: string } | object {
  return guess === undefined ? {} : { hint: `did you mean "${guess}"?` };
}

function defaultProblem<C extends string>(
  e: ErrorObject,
  path: YamlPath,
  w: Words<C>,
): SchemaProblem<C> | null {
  const params = e.params as Record<string, unknown>;
  const { field, value } = w;
  const at = (code: SourceProblemCode | C, message: string, hint?: string): SchemaProblem<C> => ({
    path,
    key: false,
    code,
    message,
    ...(hint === undefined ? {} : { hint }),
  });
  switch (e.keyword) {
    case 'additionalProperties':
      return unknownKeyProblem(
        e,
        path,
        (key) => `unknown key "${key}" ${w.place(path)}`,
        (guess) => `did you mean "${guess}"?`,
      );
    case 'required': {
      const missing = String(params.missingProperty);
      const hint = w.wording.missingHints?.[missing];
      // Pointed at where the mapping is named: its own range starts at its first key.
      return {
        path,
        key: path.length > 0,
        code: 'MISSING_KEY',
        message: `${field(path)} has no \`${missing}\``,
        ...(hint === undefined ? {} : { hint }),
      };
    }
    case 'type':
      if (path.length === 0) {
        return at(
          'WRONG_TYPE',
          e.data === null || e.data === undefined
            ? 'the file is empty'
            : `the file must be a mapping, not ${value(e.data, path)}`,
        );
      }
      return at(
        'WRONG_TYPE',
        `${field(path)} must be ${ajvTypeWords(params.type)}, not ${value(e.data, path)}`,
      );
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map(String);
      // Edit distance says nothing about version numbers: "3.6" is not a typo of "3.4".
      const guess =
        typeof e.data === 'string' && !w.secret(path) && !/^[\d.]+$/.test(e.data)
          ? closestMatch(e.data, allowed)
          : undefined;
      return {
        ...at(
          'BAD_VALUE',
          `${field(path)} must be one of ${allowed.join(', ')}, not ${value(e.data, path)}`,
        ),
        ...didYouMean(guess),
      };
    }
    case 'const':
      return at(
        'BAD_VALUE',
        `${field(path)} must be ${describeValue(params.allowedValue)}, not ${value(e.data, path)}`,
      );
    case 'pattern': {
      const known = w.wording.patterns?.[String(params.pattern)];
      if (known === undefined)
        return at('BAD_VALUE', `${field(path)}: ${value(e.data, path)} is not valid`);
      return at(
        known.code ?? 'BAD_VALUE',
        `${field(path)}: ${value(e.data, path)} is not ${known.what}`,
        known.hint,
      );
    }
    case 'propertyNames': {
      const name = String(params.propertyName);
      const words = w.wording.badName?.(name, path) ?? {
        message: `"${name}" is not a valid name ${w.place(path)}`,
      };
      return { path: [...path, name], key: true, code: 'BAD_VALUE', ...words };
    }
    case 'minLength':
      return at('BAD_VALUE', `${field(path)} is empty`);
    case 'maxLength':
      return at('BAD_VALUE', `${field(path)} is longer than ${String(params.limit)} characters`);
    case 'minItems':
      return at('BAD_VALUE', `${field(path)} is an empty list`, 'give at least one entry');
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return at(
        'BAD_VALUE',
        `${field(path)} must be ${BOUND_WORDS[e.keyword]} ${String(params.limit)}, not ${value(e.data, path)}`,
      );
    case 'uniqueItems':
      return at(
        'BAD_VALUE',
        `${field(path)} lists the same entry twice (items ${String(params.j)} and ${String(params.i)})`,
      );
    case 'discriminator': {
      const tag = String(params.tag);
      const branches =
        (e.parentSchema as { oneOf?: { properties?: Record<string, { const?: unknown }> }[] })
          .oneOf ?? [];
      const allowed = branches.map((b) => String(b.properties?.[tag]?.const));
      if (params.error === 'tag') {
        return {
          ...at(
            'MISSING_KEY',
            `${field(path)} has no \`${tag}\``,
            `add \`${tag}:\` ${allowed.join(', ')}`,
          ),
          key: true,
        };
      }
      const tagPath = [...path, tag];
      const tagValue = params.tagValue;
      const guess =
        typeof tagValue === 'string' && !w.secret(tagPath)
          ? closestMatch(tagValue, allowed)
          : undefined;
      return {
        path: tagPath,
        key: false,
        code: 'BAD_VALUE',
        message: `${field(tagPath)} must be one of ${allowed.join(', ')}, not ${value(tagValue, tagPath)}`,
        ...didYouMean(guess),
      };
    }
    case 'oneOf':
    case 'anyOf':
      return at('SCHEMA', `${field(path)} is none of the forms allowed here`);
    default:
      return at('SCHEMA', `${field(path)} ${e.message ?? 'is not valid'}`);
  }
}
