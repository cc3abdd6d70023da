import type { ErrorObject } from 'ajv';
import { unknownKeyProblem, type SchemaProblem } from '../../core/source/index.js';
import type { YamlPath } from '../../core/yaml-locator.js';
import type { RuleProblemCode } from '../rule-problem.js';

/** RFC 3339 with a zone (Z or an offset), as the ledger writes times. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

const stringList = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };
const timestamp = { type: 'string', pattern: TIMESTAMP.source };
const txFields = {
  updateId: { type: 'string', minLength: 1 },
  offset: { type: 'integer', minimum: 1 },
  nodeId: { type: 'integer', minimum: 0 },
  recordTime: timestamp,
  effectiveAt: timestamp,
  workflowId: { type: 'string' },
};
const common = {
  template: { type: 'string' },
  contractId: { type: 'string', minLength: 1 },
  packageName: { type: 'string', minLength: 1 },
  witnesses: stringList,
};
/** A created event's (or active contract's) interface views: the view, or why it failed. */
const interfaceViews = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['interface'],
    properties: {
      interface: { type: 'string' },
      view: { type: 'object' },
      error: { type: 'string' },
    },
  },
};
const createdFields = {
  ...common,
  interfaceViews,
  createArgument: { type: 'object' },
  contractKey: {},
  signatories: stringList,
  observers: stringList,
  createdAt: timestamp,
  createdEventBlob: { type: 'string' },
};
const obj = (properties: Record<string, unknown>, required: string[] = ['template']): object => ({
  type: 'object',
  additionalProperties: false,
  required,
  properties,
});
const commandFields = obj(
  {
    template: { type: 'string' },
    createArguments: {},
    contractId: {},
    contractKey: {},
    choice: { type: 'string' },
    choiceArgument: {},
  },
  [],
);

/** The JSON Schema of rule test files (published as schema/rule-tests.schema.json). */
export const TEST_FILE_SCHEMA = obj(
  {
    rules: stringList,
    parties: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
    now: timestamp,
    tests: {
      type: 'array',
      minItems: 1,
      items: obj(
        {
          name: { type: 'string', minLength: 1 },
          now: timestamp,
          given: {
            type: 'array',
            items: obj(
              {
                created: obj({ ...createdFields, ...txFields }),
                exercised: obj(
                  {
                    ...common,
                    ...txFields,
                    choice: { type: 'string', minLength: 1 },
                    choiceArgument: {},
                    consuming: { type: 'boolean' },
                    actingParties: stringList,
                    exerciseResult: {},
                    interfaceId: { type: 'string' },
                    implementedInterfaces: stringList,
                    lastDescendantNodeId: { type: 'integer', minimum: 0 },
                  },
                  ['template', 'choice'],
                ),
                archived: obj({ ...common, ...txFields, implementedInterfaces: stringList }),
              },
              [],
            ),
          },
          slot: timestamp,
          rule: stringList,
          contracts: { type: 'array', items: obj({ ...createdFields, offset: txFields.offset }) },
          snapshotOffset: { type: 'integer', minimum: 0 },
          expect: {
            type: 'array',
            items: obj(
              {
                rule: { type: 'string' },
                createAndExercise: commandFields,
                create: commandFields,
                exercise: commandFields,
                exerciseByKey: commandFields,
                actAs: stringList,
                readAs: stringList,
                workflowId: { type: 'string' },
                commandId: { type: 'string' },
              },
              [],
            ),
          },
          expectErrors: {
            type: 'array',
            items: obj(
              { rule: { type: 'string' }, message: { type: 'string' }, code: { type: 'string' } },
              ['rule'],
            ),
          },
        },
        ['name'],
      ),
    },
  },
  ['rules', 'parties', 'tests'],
);

/** Rule test files word every schema problem their own way (the CLI's tests show them). */
export function explainTestFileError(
  e: ErrorObject,
  path: YamlPath,
): SchemaProblem<RuleProblemCode> {
  const field = [...path].reverse().find((p) => typeof p === 'string') ?? 'the file';
  const at = (code: RuleProblemCode, message: string): SchemaProblem<RuleProblemCode> => ({
    path,
    key: false,
    code,
    message,
  });
  switch (e.keyword) {
    case 'additionalProperties':
      return unknownKeyProblem(
        e,
        path,
        (key) => `unknown key "${key}"`,
        (guess) => `did you mean \`${guess}\`?`,
      );
    case 'required': {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      return at('MISSING_KEY', `missing \`${missing}:\``);
    }
    case 'pattern':
      return at(
        'BAD_VALUE',
        `${String(field)} must be a timestamp such as 2025-03-03T09:30:00Z (with Z or an offset)`,
      );
    case 'anyOf':
      return at('WRONG_TYPE', `${String(field)} must be text or a list of texts`);
    case 'type':
      return at(
        'WRONG_TYPE',
        `${String(field)} must be ${String((e.params as { type: unknown }).type)
          .replace('object', 'a mapping')
          .replace('array', 'a list')
          .replace('string', 'text')}`,
      );
    default:
      return at('SCHEMA', `${String(field)} ${e.message ?? 'is not valid'}`);
  }
}
