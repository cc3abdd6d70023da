import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/**
 * Validates wire payloads against the official JSON Ledger API specs, as bundled by
 * `npm run gen:wire` into src/ledger/wire/ledger-api-specs.json (their component schemas, the
 * OpenAPI operations and the AsyncAPI channels), so that a clone of the repository alone tests the
 * same; spec-validator.test.ts checks the bundle against ../shared's specs wherever they are.
 *
 * The specs never set `additionalProperties: false`, so a misspelled field would pass a plain
 * validation. In `strict` mode (the default) every object schema that lists `properties` is closed,
 * which turns a wrong field name or a missing `value` wrapper into a failure. Free-form maps
 * (those with `additionalProperties` already set) and property-less objects stay open.
 */
export type SpecName = 'openapi-3.5' | 'asyncapi-3.5' | 'openapi-3.4' | 'asyncapi-3.4';

/** One operation of an OpenAPI spec: its JSON request schema and 200 response schema, by name. */
export type BundledOperation = {
  readonly method: string;
  readonly template: string;
  readonly operationId: string;
  readonly request?: string;
  readonly response?: string | { readonly arrayOf: string };
};

/** What the bundle holds of one spec. */
export type BundledSpec = {
  readonly source: string;
  readonly schemas: Record<string, Json>;
  readonly operations?: readonly BundledOperation[];
  readonly channels?: Record<string, { subscribe?: string; publish?: string }>;
};

export const SPEC_BUNDLE_PATH = new URL(
  '../../src/ledger/wire/ledger-api-specs.json',
  import.meta.url,
);

let bundle: Record<SpecName, BundledSpec> | undefined;

/** The committed bundle, read once. */
export function bundledSpec(name: SpecName): BundledSpec {
  bundle ??= JSON.parse(readFileSync(SPEC_BUNDLE_PATH, 'utf8')) as Record<SpecName, BundledSpec>;
  return bundle[name];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The optional fields Canton prints as `null` when they are absent, although the spec types them
 * as plain strings, numbers or objects: its circe codecs encode a `None` as null and nothing in
 * ledger-json-api drops nulls (../shared/ledger-api/NOTES.md "Corrections" ("Absent optionals in
 * API structures are `null`, never missing") and §0 item 4; [C35] JSV2/JsSchema.scala
 * JsTransaction, JsEvent, JsCantonError, JsInterfaceView; JsEventService.scala;
 * JsStateService.scala JsGetActiveContractsPageResponse). Only these accept null; everywhere else
 * a null still fails validation.
 */
export const CANTON_NULLABLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  JsGetEventsByContractIdResponse: ['created', 'archived'],
  JsGetActiveContractsPageResponse: ['nextPageToken'],
  CreatedEvent: ['contractKey'],
  ExercisedEvent: ['interfaceId'],
  JsInterfaceView: ['viewValue', 'implementationPackageId'],
  JsTransaction: ['traceContext', 'externalTransactionHash', 'paidTrafficCost'],
  Completion1: ['traceContext'],
  TraceContext: ['traceparent', 'tracestate'],
  JsCantonError: ['correlationId', 'traceId', 'grpcCodeValue', 'retryInfo', 'definiteAnswer'],
};

/** Lets the fields of CANTON_NULLABLE_FIELDS be null (in place; `schemas` is a fresh copy). */
function allowCantonNulls(schemas: Record<string, Json>): void {
  for (const [name, fields] of Object.entries(CANTON_NULLABLE_FIELDS)) {
    const schema = schemas[name];
    if (schema === undefined || schema === null || typeof schema !== 'object') continue;
    const props = (schema as { properties?: Record<string, Json> }).properties;
    if (props === undefined) continue;
    for (const field of fields) {
      const prop = props[field];
      // 3.4 lacks some 3.5 fields (implementationPackageId); spec-validator.test.ts checks 3.5.
      if (prop !== undefined) props[field] = { anyOf: [prop, { type: 'null' }] };
    }
  }
}

function closeObjects(node: Json): Json {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(node)) {
    // `properties` and `additionalProperties` hold schemas keyed by field name; recurse into values.
    out[k] = closeObjects(v);
  }
  if (
    out.properties !== undefined &&
    typeof out.properties === 'object' &&
    out.additionalProperties === undefined
  ) {
    out.additionalProperties = false;
  }
  return out;
}

export class SpecValidator {
  readonly #ajv: Ajv;
  readonly #cache = new Map<string, ValidateFunction>();
  readonly #schemas: Record<string, Json>;
  readonly spec: BundledSpec;

  constructor(name: SpecName, options: { strict?: boolean } = {}) {
    this.spec = bundledSpec(name);
    // Both branches copy, so allowCantonNulls can patch in place.
    const schemas =
      options.strict === false
        ? structuredClone(this.spec.schemas)
        : (closeObjects(this.spec.schemas) as Record<string, Json>);
    allowCantonNulls(schemas);
    this.#schemas = schemas;
    this.#ajv = new Ajv({ allErrors: true, strict: false, validateFormats: true });
    for (const f of ['int32', 'int64', 'double', 'float', 'binary', 'byte', 'date-time'])
      this.#ajv.addFormat(f, true);
    this.#ajv.addSchema({ $id: 'spec', components: { schemas: this.#schemas } });
  }

  has(schemaName: string): boolean {
    return this.#schemas[schemaName] !== undefined;
  }

  /** Returns readable errors; empty when `value` matches `#/components/schemas/<schemaName>`. */
  errors(schemaName: string, value: unknown): string[] {
    if (!this.has(schemaName)) throw new Error(`the spec has no schema named ${schemaName}`);
    let validate = this.#cache.get(schemaName);
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `spec#/components/schemas/${schemaName}` });
      this.#cache.set(schemaName, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(describe);
  }

  /** Throws with every mismatch listed; use in tests as `validator.assert('JsCommands', body)`. */
  assert(schemaName: string, value: unknown): void {
    const errs = this.errors(schemaName, value);
    if (errs.length > 0) {
      throw new Error(
        `payload does not match ${schemaName}:\n  ${errs.slice(0, 20).join('\n  ')}\n` +
          `payload: ${JSON.stringify(value).slice(0, 2000)}`,
      );
    }
  }
}

function describe(e: ErrorObject): string {
  const extra =
    e.keyword === 'additionalProperty' || e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
      : '';
  return `${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
}

const shared = new Map<string, SpecValidator>();

/** A cached validator per spec, strict by default. */
export function specValidator(name: SpecName = 'openapi-3.5', strict = true): SpecValidator {
  const key = `${name}:${String(strict)}`;
  let v = shared.get(key);
  if (v === undefined) {
    v = new SpecValidator(name, { strict });
    shared.set(key, v);
  }
  return v;
}
