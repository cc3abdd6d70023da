/**
 * The JSON Schema of rule files (language version 1): the single source of truth for validation
 * (ajv, with defaults) and for editors (published as schema/rules.schema.json by
 * `npm run gen:schema`). Structural rules the schema cannot say well (exactly one trigger, exactly
 * one command per action) are also checked in code, with clearer messages.
 */
import { DEFAULTS } from '../core/defaults.js';
import { formatDuration } from '../core/duration.js';

import { COMMAND_KINDS, RULE_LIMITS, RULE_PATTERNS } from './rule-language.js';
import {
  choice,
  damlValue,
  duration,
  expression,
  interfaceRef,
  partyAlias,
  RETRY_DEFAULTS_TEXT,
  templateOrInterface,
  templateRef,
  type Schema,
} from './rule-schema-parts.js';
import { forEachSchema, onSchema, scheduleSchema } from './trigger-schema.js';

const commandBody = (kind: (typeof COMMAND_KINDS)[number]): Schema => {
  const properties: Record<string, Schema> = { template: templateRef, interface: interfaceRef };
  const required: string[] = [];
  if (kind === 'create' || kind === 'createAndExercise') {
    properties.createArguments = { ...damlValue, type: 'object' };
    required.push('createArguments');
  }
  if (kind === 'exercise') {
    properties.contractId = {
      type: 'string',
      description: 'The contract to exercise on, usually "${{ event.contractId }}".',
    };
    required.push('contractId');
  }
  if (kind === 'exerciseByKey') {
    properties.contractKey = damlValue;
    required.push('contractKey');
  }
  if (kind !== 'create') {
    properties.choice = choice;
    properties.choiceArgument = { ...damlValue, default: {} };
    required.push('choice');
  }
  return {
    type: 'object',
    additionalProperties: false,
    required,
    properties,
    ...templateOrInterface,
  };
};

const disclosedContract: Schema = {
  anyOf: [
    { type: 'string', description: 'A ${{ expr }} that evaluates to a disclosed contract.' },
    {
      type: 'object',
      additionalProperties: false,
      required: ['contractId', 'createdEventBlob'],
      properties: {
        contractId: { type: 'string' },
        createdEventBlob: { type: 'string' },
        templateId: { type: 'string' },
        synchronizerId: { type: 'string' },
      },
    },
  ],
};

const action: Schema = {
  type: 'object',
  description:
    'One command to submit. Exactly one of createAndExercise, create, exercise, exerciseByKey.',
  additionalProperties: false,
  properties: {
    createAndExercise: {
      ...commandBody('createAndExercise'),
      description: 'Create a contract and exercise a choice on it, in one command.',
    },
    create: { ...commandBody('create'), description: 'Create a contract.' },
    exercise: {
      ...commandBody('exercise'),
      description: 'Exercise a choice on a contract, by contract id.',
    },
    exerciseByKey: {
      ...commandBody('exerciseByKey'),
      description: 'Exercise a choice on the contract with this key.',
    },
    actAs: {
      type: ['string', 'array'],
      items: partyAlias,
      minItems: 1,
      pattern: RULE_PATTERNS.PARTY_ALIAS,
      description: 'The party alias(es) that submit the command.',
    },
    readAs: {
      type: ['string', 'array'],
      items: partyAlias,
      pattern: RULE_PATTERNS.PARTY_ALIAS,
      description: 'Extra party aliases whose contracts the command may read.',
    },
    workflowId: {
      type: 'string',
      maxLength: 255,
      description: 'Workflow id of the submission; may use ${{ expr }}.',
    },
    disclosedContracts: {
      type: 'array',
      items: disclosedContract,
      description: 'Contracts disclosed to the command (explicit disclosure).',
    },
  },
  required: ['actAs'],
  oneOf: COMMAND_KINDS.map((k) => ({ required: [k] })),
};

const rule: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'then'],
  properties: {
    id: {
      type: 'string',
      minLength: 1,
      maxLength: RULE_LIMITS.RULE_ID_MAX,
      pattern: RULE_PATTERNS.RULE_ID,
      description:
        'Stable id, unique across all rule files: lowercase letters, digits, - and _. Part of every commandId; renaming it re-fires the rule.',
    },
    description: {
      type: 'string',
      maxLength: RULE_LIMITS.DESCRIPTION_MAX,
      default: '',
      description: 'What the rule does, for people.',
    },
    enabled: {
      type: 'boolean',
      default: true,
      description: 'false keeps the rule but never fires it.',
    },
    revision: {
      type: 'integer',
      minimum: 1,
      default: 1,
      description: 'Bump to re-fire on events already handled (it changes the commandIds).',
    },
    labels: {
      type: 'object',
      propertyNames: { pattern: RULE_PATTERNS.LABEL_KEY },
      additionalProperties: { type: 'string' },
      default: {},
      description: 'Free-form labels, e.g. team: billing.',
    },
    on: onSchema,
    schedule: scheduleSchema,
    forEach: forEachSchema,
    when: {
      description: 'A CEL condition, or a list of conditions that must all be true.',
      anyOf: [expression, { type: 'array', items: expression, minItems: 1 }],
    },
    then: {
      type: 'array',
      minItems: 1,
      maxItems: RULE_LIMITS.ACTIONS_PER_RULE_MAX,
      items: action,
      description: 'The commands to submit when the rule fires, in order.',
    },
    retry: {
      type: 'object',
      description: `How submissions of this rule are retried. Each field the rule writes wins; a field it leaves out comes from the bot config's \`submission.retry\`, else from the defaults (${RETRY_DEFAULTS_TEXT}).`,
      additionalProperties: false,
      default: {},
      properties: {
        maxAttempts: {
          type: 'integer',
          minimum: 1,
          maximum: RULE_LIMITS.RETRY_ATTEMPTS_MAX,
          default: DEFAULTS.retry.maxAttempts,
          description: 'Attempts in total, the first one included.',
        },
        initialDelay: duration(
          'Delay before the first retry.',
          formatDuration(DEFAULTS.retry.initialDelayMs),
        ),
        maxDelay: duration(
          'Longest delay between retries.',
          formatDuration(DEFAULTS.retry.maxDelayMs),
        ),
        deadline: duration(
          'Give up this long after the intent was recorded (its first attempt follows unless admission makes it wait).',
          formatDuration(DEFAULTS.retry.deadlineMs),
        ),
      },
    },
    rateLimit: {
      type: 'object',
      description: 'At most this many submissions of this rule per second.',
      additionalProperties: false,
      default: {},
      properties: {
        perSecond: {
          type: 'number',
          exclusiveMinimum: 0,
          default: DEFAULTS.rule.rateLimit.perSecond,
        },
        burst: { type: 'integer', minimum: 1, default: DEFAULTS.rule.rateLimit.burst },
      },
    },
    concurrency: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      default: DEFAULTS.rule.concurrency,
      description: 'Submissions of this rule in flight at once.',
    },
  },
  oneOf: [{ required: ['on'] }, { required: ['schedule'] }],
};

/** The ajv options rule files are checked with (over `schemaChecker`'s): the defaults are filled in. */
export const RULE_FILE_AJV_OPTIONS = { useDefaults: true } as const;

export const RULES_SCHEMA_ID = 'https://ledgerbot.dev/schema/rules.schema.json';

/** The schema object (JSON Schema draft-07, understood by VS Code's YAML extension and ajv). */
export const RULES_SCHEMA: Schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: RULES_SCHEMA_ID,
  title: 'ledgerbot rule file (version 1)',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'rules'],
  properties: {
    version: { const: 1, description: 'The rule language version: 1.' },
    rules: {
      type: 'array',
      maxItems: RULE_LIMITS.RULES_PER_FILE_MAX,
      items: rule,
      description: 'The rules of this file.',
    },
  },
};
