/** A model file's shapes as the schema (model-schema.ts) lets them through, before compiling. */
export type RawType = string | { enum: string[] } | Record<string, unknown>;
export type RawValue = string | number | boolean | null | { [k: string]: RawValue };
export type RawParties = string | string[];
export type RawStep = {
  create?: string;
  with?: RawValue;
  exercise?: string;
  on?: string;
  template?: string;
  argument?: RawValue;
  fetch?: string;
  assert?: string;
  message?: string;
  as?: string;
};
export type RawChoice = {
  controllers: RawParties;
  observers?: RawParties;
  consuming?: boolean;
  argument?: Record<string, RawType>;
  body?: RawStep[];
  result?: RawValue;
  returns?: RawType;
};
export type RawTemplate = {
  fields: Record<string, RawType>;
  signatories: RawParties;
  observers?: RawParties;
  ensure?: string;
  key?: { type: RawType; value: RawValue; maintainers: RawParties };
  implements?: Record<string, { view: RawValue }>;
  choices?: Record<string, RawChoice>;
};
export type RawModel = {
  package: { name: string; version: string };
  interfaces?: Record<string, { view: Record<string, RawType> }>;
  templates: Record<string, RawTemplate>;
};
