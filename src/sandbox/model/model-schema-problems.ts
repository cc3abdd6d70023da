import type { ErrorObject } from 'ajv';
import { ajvInstancePath } from '../../core/ajv-instance-path.js';
import type { ModelLocator } from './model-locator.js';
import { MODEL_PATTERNS } from './model-schema.js';
import type { ModelProblem } from './model-error.js';

function describeAjvError(e: ErrorObject): { problem: string; key?: string } {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return {
        problem: `unknown key "${String(params.additionalProperty)}": remove it or check its spelling`,
        key: String(params.additionalProperty),
      };
    case 'required':
      return { problem: `"${String(params.missingProperty)}" is missing` };
    case 'propertyNames':
      return {
        problem: `the name "${String(params.propertyName)}" is not allowed here`,
        key: String(params.propertyName),
      };
    case 'pattern': {
      const hint =
        params.pattern === MODEL_PATTERNS.QUALIFIED
          ? 'write Module:Entity with capitalised names, e.g. Invoice:Invoice'
          : params.pattern === MODEL_PATTERNS.IDENT
            ? 'use letters, digits and _, not starting with a digit'
            : `it must match ${String(params.pattern)}`;
      return { problem: `invalid name: ${hint}` };
    }
    default:
      return { problem: e.message ?? e.keyword };
  }
}

/** Picks the most useful error of a group: deepest first, `anyOf` and `type` summaries last. */
function pickError(errors: readonly ErrorObject[]): ErrorObject {
  const ranked = [...errors].sort((a, b) => {
    const depth = ajvInstancePath(b).length - ajvInstancePath(a).length;
    if (depth !== 0) return depth;
    return (
      Number(a.keyword === 'anyOf' || a.keyword === 'type') -
      Number(b.keyword === 'anyOf' || b.keyword === 'type')
    );
  });
  return ranked[0]!;
}

function isPrefix(prefix: string, path: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * One problem per mistake: the errors of the alternatives of an `anyOf` (a type, a value, a
 * parties list) stand for one mistake, told by its most specific error; a `propertyNames`
 * error comes with a nested `pattern` error on the same name, which says less.
 */
function groupErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const named = errors.filter((e) => !e.schemaPath.includes('/propertyNames/'));
  const anyOfRoots = named
    .filter((e) => e.keyword === 'anyOf')
    .map((e) => e.instancePath)
    .filter((p, i, all) => !all.some((q, j) => j !== i && q !== p && isPrefix(q, p)));
  const picked: ErrorObject[] = [];
  const done = new Set<string>();
  for (const e of named) {
    const root = anyOfRoots.find((r) => isPrefix(r, e.instancePath));
    if (root === undefined) {
      picked.push(e);
    } else if (!done.has(root)) {
      done.add(root);
      picked.push(pickError(named.filter((x) => isPrefix(root, x.instancePath))));
    }
  }
  return picked;
}

/** Every schema problem of a model file, each at the place it names. */
export function modelSchemaProblems(
  errors: readonly ErrorObject[],
  at: ModelLocator,
): ModelProblem[] {
  const out: ModelProblem[] = [];
  const seen = new Set<string>();
  for (const e of groupErrors(errors)) {
    const path = ajvInstancePath(e);
    const { problem, key } = describeAjvError(e);
    // A missing key is reported where its map is named (the map's own range starts at its first key).
    const pos =
      key !== undefined
        ? at.pos([...path, key], { key: true })
        : e.keyword === 'required' && path.length > 0
          ? at.pos(path, { key: true })
          : at.pos(path);
    const id = `${pos.line}:${pos.col}:${problem}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ file: pos.file, line: pos.line, col: pos.col, problem });
  }
  return out;
}
