import { specValidator, type SpecValidator } from './spec-validator.js';

/**
 * Looks up an HTTP call in the OpenAPI spec and validates its request and response bodies against
 * the schemas the spec declares for that path and method. Used by the client's MockAgent tests and
 * by the sandbox's conformance suite, so a payload is checked against the operation it belongs to,
 * not against a schema name a test author picked.
 */
export type SpecOperation = {
  readonly method: string;
  readonly template: string;
  readonly operationId: string;
  /** Schema name of the JSON request body, if the operation takes one. */
  readonly requestSchema: string | undefined;
  /** Schema of the 200 JSON body: a schema name, or `{arrayOf: name}` for list endpoints. */
  readonly responseSchema: string | { arrayOf: string } | undefined;
};

export class SpecRoutes {
  readonly #ops: (SpecOperation & { regex: RegExp })[] = [];
  readonly validator: SpecValidator;

  constructor(validator: SpecValidator) {
    this.validator = validator;
    for (const op of validator.spec.operations ?? []) {
      const regex = new RegExp(
        '^' + op.template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\//g, '\\/') + '$',
      );
      this.#ops.push({
        method: op.method,
        template: op.template,
        operationId: op.operationId,
        requestSchema: op.request,
        responseSchema: op.response,
        regex,
      });
    }
    // Literal segments must win over path parameters (/v2/parties/participant-id vs /v2/parties/{party}).
    this.#ops.sort((a, b) => paramCount(a.template) - paramCount(b.template));
  }

  /** All operations of the spec (for "every route is served" checks). */
  get operations(): readonly SpecOperation[] {
    return this.#ops;
  }

  find(method: string, path: string): SpecOperation | undefined {
    const bare = path.split('?')[0] ?? path;
    return this.#ops.find((o) => o.method === method.toUpperCase() && o.regex.test(bare));
  }

  #mustFind(method: string, path: string): SpecOperation {
    const op = this.find(method, path);
    if (op === undefined) throw new Error(`the spec has no operation ${method} ${path}`);
    return op;
  }

  assertRequest(method: string, path: string, body: unknown): void {
    const op = this.#mustFind(method, path);
    if (op.requestSchema === undefined) {
      if (body !== undefined) throw new Error(`${method} ${path} takes no JSON body in the spec`);
      return;
    }
    this.validator.assert(op.requestSchema, body);
  }

  assertResponse(method: string, path: string, status: number, body: unknown): void {
    const op = this.#mustFind(method, path);
    if (status !== 200) {
      this.validator.assert('JsCantonError', body);
      return;
    }
    const schema = op.responseSchema;
    if (schema === undefined) return;
    if (typeof schema === 'string') {
      this.validator.assert(schema, body);
      return;
    }
    if (!Array.isArray(body)) throw new Error(`${method} ${path} must answer a JSON array`);
    for (const item of body) this.validator.assert(schema.arrayOf, item);
  }
}

function paramCount(template: string): number {
  return (template.match(/\{/g) ?? []).length;
}

const cache = new Map<string, SpecRoutes>();

export function specRoutes(name: 'openapi-3.5' | 'openapi-3.4' = 'openapi-3.5'): SpecRoutes {
  let r = cache.get(name);
  if (r === undefined) {
    r = new SpecRoutes(specValidator(name));
    cache.set(name, r);
  }
  return r;
}
