/**
 * The JSON Schema of rule files (language version 1): the single source of truth for validation
 * (ajv, with defaults) and for editors (published as schema/rules.schema.json by
 * `npm run gen:schema`). Structural rules the schema cannot say well (exactly one trigger, exactly
 * one command per action) are also checked in code, with clearer messages.
 */
import { DEFAULTS } from '../core/defaults.js';
import { formatDuration } from '../core/duration.js';

/** Patterns shared by the schema and the loader's messages. */
export const RULE_PATTERNS = {
  /** Lowercase ASCII slug: LedgerString-safe, so the commandId `lb-<id>-<hash>` stays valid. */
  RULE_ID: '^[a-z0-9][a-z0-9_-]*$',
  /** `#package-name:Module.Path:Entity`, or the deprecated `<package-id>:Module.Path:Entity`. */
  TEMPLATE_REF:
    '^(#[A-Za-z0-9][A-Za-z0-9._-]*|[0-9a-f]{64}):[A-Z][A-Za-z0-9_]*(\\.[A-Z][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$',
  /** Daml identifiers (choice names, party aliases follow config keys). */
  CHOICE: '^[A-Za-z_][A-Za-z0-9_]*$',
  PARTY_ALIAS: '^[A-Za-z_][A-Za-z0-9_-]*$',
  DURATION: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h|d|w))+$',
  LABEL_KEY: '^[A-Za-z_][A-Za-z0-9_.-]*$',
} as const;

/** Limits of the language, each with an error that names it. */
export const RULE_LIMITS = {
  /** `lb-` + id + `-` + 64 hex chars must fit in a 255-character LedgerString. */
  RULE_ID_MAX: 128,
  DESCRIPTION_MAX: 1000,
  EXPRESSION_MAX: 4000,
  RULES_PER_FILE_MAX: 10_000,
  ACTIONS_PER_RULE_MAX: 100,
  /** A retry policy's attempts; the config's `submission.retry` (the rules' default) has the same cap. */
  RETRY_ATTEMPTS_MAX: 1000,
  /** Contracts in one `forEach.batch` (one command carries them all). */
  BATCH_SIZE_MAX: 1000,
  /**
   * Selected contracts a slot holds while their groups (`batch.groupBy`) fill; beyond it, the
   * group open longest fires early. Bounds a slot's memory whatever the number of groups.
   */
  BATCH_PENDING_MAX: 10_000,
} as const;

export const COMMAND_KINDS = ['createAndExercise', 'create', 'exercise', 'exerciseByKey'] as const;
export const TRIGGER_KINDS = ['created', 'exercised', 'archived'] as const;

type Schema = Readonly<Record<string, unknown>>;

/** "maxAttempts 10, initialDelay 1s, maxDelay 1m, deadline 1h", for the schema's description. */
const RETRY_DEFAULTS_TEXT = [
  `maxAttempts ${DEFAULTS.retry.maxAttempts}`,
  `initialDelay ${formatDuration(DEFAULTS.retry.initialDelayMs)}`,
  `maxDelay ${formatDuration(DEFAULTS.retry.maxDelayMs)}`,
  `deadline ${formatDuration(DEFAULTS.retry.deadlineMs)}`,
].join(', ');

const templateRef: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.TEMPLATE_REF,
  description:
    'A template (or interface) reference: "#package-name:Module:Entity" (a package-id instead of "#name" is deprecated).',
  examples: ['#invoices:Invoice:Invoice'],
};

const interfaceRef: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.TEMPLATE_REF,
  description:
    'An interface reference: "#package-name:Module:Interface". Exercises the interface\'s choice on any contract whose template implements it.',
  examples: ['#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding'],
};

/** `template:` or `interface:`, exactly one (commands other than `exercise` refuse an interface in code, with a reason). */
const templateOrInterface: Schema = {
  oneOf: [{ required: ['template'] }, { required: ['interface'] }],
};

const partyAlias: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.PARTY_ALIAS,
  description: 'A party alias: a key of `parties:` in bot.config.yaml.',
};

const choice: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.CHOICE,
  description: 'A choice name of the template, e.g. Accept.',
};

const duration = (description: string, dflt?: string): Schema => ({
  type: 'string',
  pattern: RULE_PATTERNS.DURATION,
  description: `${description} A number with a unit: ms, s, m, h, d or w (e.g. 30s, 5m, 1h30m).`,
  ...(dflt === undefined ? {} : { default: dflt }),
});

const expression: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: RULE_LIMITS.EXPRESSION_MAX,
  description: 'A CEL expression that evaluates to true or false.',
};

/** Any Daml value as JSON; strings may hold `${{ expr }}` templates. */
const damlValue: Schema = {
  description:
    'A Daml value in JSON form. Strings may use ${{ expr }}: as the whole value it keeps the type of expr; inside a longer string it is interpolated.',
};

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

const on: Schema = {
  type: 'object',
  description:
    'What the rule reacts to: exactly one of created, exercised, archived; and the party whose view it reads.',
  additionalProperties: false,
  properties: {
    created: {
      ...templateRef,
      description:
        'React to contracts of this template being created; or of any template implementing this interface (then `event.view` is the interface view).',
    },
    exercised: {
      type: 'object',
      description:
        'React to a choice being exercised: a choice of `template`, or an interface choice of `interface` (exercised through the interface).',
      additionalProperties: false,
      required: ['choice'],
      ...templateOrInterface,
      properties: {
        template: templateRef,
        interface: interfaceRef,
        choice,
        consuming: {
          type: 'boolean',
          description: 'Only consuming (true) or non-consuming (false) exercises; omit for both.',
        },
      },
    },
    archived: {
      ...templateRef,
      description:
        'React to contracts of this template (or of any template implementing this interface) being archived.',
    },
    party: partyAlias,
  },
  required: ['party'],
  oneOf: TRIGGER_KINDS.map((k) => ({ required: [k] })),
};

const schedule: Schema = {
  type: 'object',
  description: 'Run the rule on a cron schedule.',
  additionalProperties: false,
  required: ['cron'],
  properties: {
    cron: {
      type: 'string',
      description:
        'Five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * MON-FRI"; or six, with a second field first, e.g. "*/10 * * * * *".',
      examples: ['0 9 * * MON-FRI', '*/15 * * * *', '0 0 1 * *', '*/10 * * * * *'],
    },
    timezone: {
      type: 'string',
      default: 'UTC',
      description: 'IANA time zone of the cron fields, e.g. Europe/Zurich.',
    },
    catchUp: {
      enum: ['none', 'last', 'all'],
      default: 'last',
      description: 'After downtime: run no missed slot, only the last one, or all of them.',
    },
    maxCatchUp: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: DEFAULTS.rule.maxCatchUp,
      description: 'With catchUp: all, run at most this many missed slots.',
    },
    jitter: duration('Delay each slot by a random time up to this, to spread load.', '0s'),
  },
};

const batch: Schema = {
  type: 'object',
  description:
    'Run `then` once per batch of the contracts `when` selects, with the batch as `contracts` (a list), instead of once per contract. Batches follow the order the active contracts are read in.',
  additionalProperties: false,
  properties: {
    size: {
      type: 'integer',
      minimum: 1,
      maximum: RULE_LIMITS.BATCH_SIZE_MAX,
      default: DEFAULTS.rule.batch.size,
      description: 'At most this many contracts per batch.',
    },
    min: {
      type: 'integer',
      minimum: 1,
      maximum: RULE_LIMITS.BATCH_SIZE_MAX,
      default: DEFAULTS.rule.batch.min,
      description:
        'A batch of fewer contracts (the last one of a slot, or of a group) does not fire; at most `size`.',
    },
    groupBy: {
      type: 'string',
      minLength: 1,
      maxLength: RULE_LIMITS.EXPRESSION_MAX,
      description:
        'A CEL expression over `contract`: contracts with equal values are batched together (each group in its own batches), e.g. `contract.view.instrumentId`.',
    },
  },
};

const forEach: Schema = {
  type: 'object',
  description:
    'For a schedule: run the rule once per active contract of a template, or of an interface (then `contract.view` is the interface view); with `batch`, once per batch of them.',
  additionalProperties: false,
  required: ['activeContracts', 'party'],
  properties: {
    activeContracts: templateRef,
    party: partyAlias,
    batch,
  },
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
    on,
    schedule,
    forEach,
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
