/** The small JSON Schema pieces that the trigger and action parts of the rule schema share. */
import { DEFAULTS } from '../core/defaults.js';
import { formatDuration } from '../core/duration.js';
import { RULE_LIMITS, RULE_PATTERNS } from './rule-language.js';

export type Schema = Readonly<Record<string, unknown>>;

/** "maxAttempts 10, initialDelay 1s, maxDelay 1m, deadline 1h", for the schema's description. */
export const RETRY_DEFAULTS_TEXT = [
  `maxAttempts ${DEFAULTS.retry.maxAttempts}`,
  `initialDelay ${formatDuration(DEFAULTS.retry.initialDelayMs)}`,
  `maxDelay ${formatDuration(DEFAULTS.retry.maxDelayMs)}`,
  `deadline ${formatDuration(DEFAULTS.retry.deadlineMs)}`,
].join(', ');

export const templateRef: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.TEMPLATE_REF,
  description:
    'A template (or interface) reference: "#package-name:Module:Entity" (a package-id instead of "#name" is deprecated).',
  examples: ['#invoices:Invoice:Invoice'],
};

export const interfaceRef: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.TEMPLATE_REF,
  description:
    'An interface reference: "#package-name:Module:Interface". Exercises the interface\'s choice on any contract whose template implements it.',
  examples: ['#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding'],
};

/** `template:` or `interface:`, exactly one (commands other than `exercise` refuse an interface in code, with a reason). */
export const templateOrInterface: Schema = {
  oneOf: [{ required: ['template'] }, { required: ['interface'] }],
};

export const partyAlias: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.PARTY_ALIAS,
  description: 'A party alias: a key of `parties:` in bot.config.yaml.',
};

export const choice: Schema = {
  type: 'string',
  pattern: RULE_PATTERNS.CHOICE,
  description: 'A choice name of the template, e.g. Accept.',
};

export const duration = (description: string, dflt?: string): Schema => ({
  type: 'string',
  pattern: RULE_PATTERNS.DURATION,
  description: `${description} A number with a unit: ms, s, m, h, d or w (e.g. 30s, 5m, 1h30m).`,
  ...(dflt === undefined ? {} : { default: dflt }),
});

export const expression: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: RULE_LIMITS.EXPRESSION_MAX,
  description: 'A CEL expression that evaluates to true or false.',
};

/** Any Daml value as JSON; strings may hold `${{ expr }}` templates. */
export const damlValue: Schema = {
  description:
    'A Daml value in JSON form. Strings may use ${{ expr }}: as the whole value it keeps the type of expr; inside a longer string it is interpolated.',
};
