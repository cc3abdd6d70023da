/** The trigger part of the rule schema: `on:` (events), `schedule:` and `forEach:`. */
import { DEFAULTS } from '../core/defaults.js';
import { RULE_LIMITS, TRIGGER_KINDS } from './rule-language.js';
import {
  choice,
  duration,
  interfaceRef,
  partyAlias,
  templateOrInterface,
  templateRef,
  type Schema,
} from './rule-schema-parts.js';

export const onSchema: Schema = {
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

export const scheduleSchema: Schema = {
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

export const forEachSchema: Schema = {
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
