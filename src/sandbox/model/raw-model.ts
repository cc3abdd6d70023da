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
/** What a choice does: shared by a template's choices and an interface choice's implementation. */
export type RawChoiceBehaviour = {
  controllers: RawParties;
  observers?: RawParties;
  body?: RawStep[];
  result?: RawValue;
};
export type RawChoice = RawChoiceBehaviour & {
  consuming?: boolean;
  argument?: Record<string, RawType>;
  returns?: RawType;
};
export type RawInterfaceChoice = {
  argument?: Record<string, RawType>;
  returns?: RawType;
  consuming?: boolean;
};
export type RawInterface = {
  view: Record<string, RawType>;
  choices?: Record<string, RawInterfaceChoice>;
};
export type RawInstance = { view: RawValue; choices?: Record<string, RawChoiceBehaviour> };
export type RawTemplate = {
  /** Left out only by a model that describes a DAR's package: then the DAR's fields. */
  fields?: Record<string, RawType>;
  signatories: RawParties;
  observers?: RawParties;
  ensure?: string;
  key?: { type: RawType; value: RawValue; maintainers: RawParties };
  /** By `Module:Interface` (this package) or `#package-name:Module:Interface`. */
  implements?: Record<string, RawInstance>;
  choices?: Record<string, RawChoice>;
};
export type RawModel = {
  package: { name: string; version: string };
  interfaces?: Record<string, RawInterface>;
  /** Left out by a package of interfaces only (as the token standard's API packages are). */
  templates?: Record<string, RawTemplate>;
};
