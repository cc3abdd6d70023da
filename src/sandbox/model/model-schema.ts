/** The JSON Schema of a sandbox model file (see docs/sandbox-models.md). */

const IDENT = '^[A-Za-z_][A-Za-z0-9_]*$';
const QUALIFIED = '^[A-Z][A-Za-z0-9_]*(\\.[A-Z][A-Za-z0-9_]*)*:[A-Z][A-Za-z0-9_]*$';

export const MODEL_PATTERNS = { IDENT, QUALIFIED } as const;

const partiesList = {
  description:
    'Field names of the contract, or CEL expressions giving a Party or a list of Parties',
  anyOf: [
    { type: 'string', minLength: 1 },
    { type: 'array', items: { type: 'string', minLength: 1 } },
  ],
};

const fieldsMap = {
  type: 'object',
  propertyNames: { pattern: IDENT },
  additionalProperties: { $ref: '#/$defs/type' },
};

const PACKAGE_NAME = '[A-Za-z][A-Za-z0-9_-]*';
/** `Module:Interface` of this package, or `#package-name:Module:Interface` of another one. */
const INTERFACE_REF = `^(#${PACKAGE_NAME}:)?${QUALIFIED.slice(1)}`;
const CHOICE_NAME = '^[A-Z][A-Za-z0-9_]*$';

/** A choice's behaviour: who controls it, who sees it, what it does and gives back. */
const choiceBehaviour = {
  controllers: partiesList,
  observers: partiesList,
  body: { type: 'array', items: { $ref: '#/$defs/step' } },
  result: { $ref: '#/$defs/value' },
} as const;

/** A choice's types: whether it consumes, its argument's fields, what it returns. */
const choiceTypes = {
  consuming: { type: 'boolean' },
  argument: fieldsMap,
  returns: { $ref: '#/$defs/type' },
} as const;

/** Choices by name, each exactly these properties (`controllers` required where there). */
function choicesByName(properties: Readonly<Record<string, unknown>>, description?: string) {
  return {
    ...(description === undefined ? {} : { description }),
    type: 'object',
    propertyNames: { pattern: CHOICE_NAME },
    additionalProperties: {
      type: 'object',
      ...('controllers' in properties ? { required: ['controllers'] } : {}),
      additionalProperties: false,
      properties,
    },
  };
}

export const MODEL_SCHEMA = {
  $id: 'https://ledgerbot.dev/schema/sandbox-model.json',
  type: 'object',
  // A package of interfaces only (as the token standard's API packages are) has no templates.
  required: ['package'],
  anyOf: [{ required: ['templates'] }, { required: ['interfaces'] }],
  additionalProperties: false,
  properties: {
    package: {
      type: 'object',
      required: ['name', 'version'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*$' },
        version: { type: 'string', pattern: '^\\d+(\\.\\d+)*$' },
      },
    },
    interfaces: {
      type: 'object',
      propertyNames: { pattern: QUALIFIED },
      additionalProperties: {
        type: 'object',
        required: ['view'],
        additionalProperties: false,
        properties: {
          view: fieldsMap,
          choices: choicesByName(
            choiceTypes,
            'The choices of the interface: their types; each implementer says what they do',
          ),
        },
      },
    },
    templates: {
      type: 'object',
      propertyNames: { pattern: QUALIFIED },
      additionalProperties: {
        type: 'object',
        // `fields` may be left out only by a model that describes a DAR's package (checked later).
        required: ['signatories'],
        additionalProperties: false,
        properties: {
          fields: fieldsMap,
          signatories: partiesList,
          observers: partiesList,
          ensure: { type: 'string', minLength: 1 },
          key: {
            type: 'object',
            required: ['type', 'value', 'maintainers'],
            additionalProperties: false,
            properties: {
              type: { $ref: '#/$defs/type' },
              value: { $ref: '#/$defs/value' },
              maintainers: partiesList,
            },
          },
          implements: {
            type: 'object',
            propertyNames: { pattern: INTERFACE_REF },
            additionalProperties: {
              type: 'object',
              required: ['view'],
              additionalProperties: false,
              properties: {
                view: { $ref: '#/$defs/value' },
                choices: choicesByName(
                  choiceBehaviour,
                  "What the interface's choices do on this template",
                ),
              },
            },
          },
          choices: choicesByName({ ...choiceBehaviour, ...choiceTypes }),
        },
      },
    },
  },
  $defs: {
    type: {
      description: 'A type such as "Numeric 2", a record as a map of fields, or {enum: [A, B]}',
      anyOf: [
        { type: 'string', minLength: 1 },
        {
          type: 'object',
          required: ['enum'],
          additionalProperties: false,
          properties: {
            enum: {
              type: 'array',
              minItems: 1,
              items: { type: 'string', pattern: '^[A-Z][A-Za-z0-9_]*$' },
            },
          },
        },
        fieldsMap,
      ],
    },
    value: {
      description: 'A CEL expression, a constant, or a record of values by field name',
      anyOf: [
        { type: ['string', 'number', 'boolean', 'null'] },
        {
          type: 'object',
          propertyNames: { pattern: IDENT },
          additionalProperties: { $ref: '#/$defs/value' },
        },
      ],
    },
    step: {
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
      properties: {
        create: { type: 'string', pattern: QUALIFIED },
        with: { $ref: '#/$defs/value' },
        exercise: { type: 'string', pattern: '^[A-Z][A-Za-z0-9_]*$' },
        on: { type: 'string', minLength: 1 },
        template: { type: 'string', pattern: QUALIFIED },
        argument: { $ref: '#/$defs/value' },
        fetch: { type: 'string', minLength: 1 },
        assert: { type: 'string', minLength: 1 },
        message: { type: 'string' },
        as: { type: 'string', pattern: IDENT },
      },
    },
  },
} as const;
