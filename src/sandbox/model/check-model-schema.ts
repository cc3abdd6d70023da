import type { ErrorObject } from 'ajv';
import { ajvInstancePath } from '../../core/ajv-instance-path.js';
import {
  explainSchemaErrors,
  schemaChecker,
  type SchemaProblem,
  type SchemaWording,
  type YamlPath,
} from '../../core/source/index.js';
import { MODEL_PATTERNS, MODEL_SCHEMA } from './model-schema.js';

type Problem = SchemaProblem;

function patternProblem(pattern: unknown): string {
  return `invalid name: ${
    pattern === MODEL_PATTERNS.QUALIFIED
      ? 'write Module:Entity with capitalised names, e.g. Invoice:Invoice'
      : pattern === MODEL_PATTERNS.IDENT
        ? 'use letters, digits and _, not starting with a digit'
        : `it must match ${String(pattern)}`
  }`;
}

function isUnder(root: string, path: string): boolean {
  return root === '' || path === root || path.startsWith(`${root}/`);
}

/**
 * The error that best tells what is wrong in a value that matches none of an `anyOf`'s forms (a
 * type, a value, a party list): the deepest one, a named key before a `type` summary.
 */
function bestBranchError(anyOf: ErrorObject, all: readonly ErrorObject[]): ErrorObject | undefined {
  const depth = (e: ErrorObject): number => ajvInstancePath(e).length;
  const vague = (e: ErrorObject): number => Number(e.keyword === 'type');
  const ranked = all
    .filter((e) => e.keyword !== 'anyOf' && isUnder(anyOf.instancePath, e.instancePath))
    .filter((e) => !e.schemaPath.endsWith('/propertyNames/pattern'))
    .sort((a, b) => depth(b) - depth(a) || vague(a) - vague(b));
  // A bad name in a record type says more than the enum form's "unknown key".
  return (
    ranked.find((e) => e.keyword === 'propertyNames') ??
    ranked.find((e) => e.keyword === 'additionalProperties') ??
    ranked[0]
  );
}

/** The model's words for an error; undefined for the front end's. */
function explain(
  e: ErrorObject,
  path: YamlPath,
  all: readonly ErrorObject[],
): Problem | null | undefined {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return {
        path,
        key: path.length > 0,
        code: 'MISSING_KEY',
        message: `"${String(params.missingProperty)}" is missing`,
      };
    case 'pattern':
      return { path, key: false, code: 'BAD_VALUE', message: patternProblem(params.pattern) };
    case 'anyOf': {
      const best = bestBranchError(e, all);
      if (best === undefined) return undefined;
      // The front end passes over errors inside anyOf branches: this one is shown, renamed.
      const shown = {
        ...best,
        schemaPath: best.schemaPath.replace(/\/anyOf\/(\d+)/g, '/anyOf-$1'),
      };
      return explainSchemaErrors([shown], MODEL_WORDING)[0] ?? null;
    }
    default:
      return undefined;
  }
}

const MODEL_WORDING: SchemaWording = {
  badName: (name) => ({ message: `the name "${name}" is not allowed here` }),
  explain,
};

/** Checks a parsed model file against MODEL_SCHEMA; every problem, placed. */
export const checkModelSchema = schemaChecker(MODEL_SCHEMA, MODEL_WORDING);
