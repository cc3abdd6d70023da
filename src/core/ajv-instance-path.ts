import type { ErrorObject } from 'ajv';

/**
 * The path an ajv error points at, as keys and list indexes: "/rules/0/then" → ["rules", 0,
 * "then"]. Decodes JSON Pointer escapes; all-digit segments become indexes.
 */
export function ajvInstancePath(e: ErrorObject): (string | number)[] {
  if (e.instancePath === '') return [];
  return e.instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}
