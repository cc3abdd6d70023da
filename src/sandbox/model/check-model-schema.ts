import type { ErrorObject } from 'ajv';
import {
  schemaChecker,
  type SchemaProblem,
  type SchemaWording,
  type YamlPath,
} from '../../core/source/index.js';
import { validate as validateModel } from './generated/model-validator.js';
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

/** The model's words for an error; undefined for the front end's. */
function explain(e: ErrorObject, path: YamlPath): Problem | null | undefined {
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
    default:
      return undefined;
  }
}

const MODEL_WORDING: SchemaWording = {
  badName: (name) => ({ message: `the name "${name}" is not allowed here` }),
  // A type, a value, a party list: say what is wrong inside the form meant, not "none of them".
  alternatives: 'most-telling',
  explain,
};

/** Checks a parsed model file against MODEL_SCHEMA; every problem, placed. */
export const checkModelSchema = schemaChecker(MODEL_SCHEMA, {
  ...MODEL_WORDING,
  compiled: validateModel,
});
