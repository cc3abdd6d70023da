import { isValueTranscodingFailure } from '../ledger/error-checks.js';
import type { ErrorRecord } from './error-record.js';
import type { SubmissionPayload } from './submission-payload.js';

/**
 * Attempts in total that may end in LEDGER_API_INTERNAL_ERROR before the intent is given up as
 * unreadable. A genuine internal fault may clear on a retry; a value the participant cannot
 * transcode fails the same way every time, so more tries only delay the dead letter.
 */
export const UNREADABLE_VALUES_ATTEMPTS = 3;

export const INTERNAL_ERROR_CODE = 'LEDGER_API_INTERNAL_ERROR';

/**
 * A synchronous LEDGER_API_INTERNAL_ERROR on submit: on Canton 3.5 that is what every
 * value-transcoding failure looks like (see `isValueTranscodingFailure`). Completions never
 * carry it: the command did not get that far.
 */
export function isInternalSubmitError(err: unknown, fromCompletion: boolean): boolean {
  return !fromCompletion && isValueTranscodingFailure(err);
}

/** The dead letter's error: what the participant said, and what it most likely means. */
export function unreadableValuesError(
  payload: SubmissionPayload,
  last: ErrorRecord | undefined,
  attempts: number,
): ErrorRecord {
  const what = describeCommands(payload);
  return {
    ...(last ?? { code: INTERNAL_ERROR_CODE, message: '' }),
    code: INTERNAL_ERROR_CODE,
    message:
      `the participant could not read the command's values (${what}): ` +
      `${INTERNAL_ERROR_CODE} on ${attempts} attempt(s). On Canton 3.5 this is how a value of ` +
      'the wrong kind is refused (a number for an Int64 or a Text, a Date given as a timestamp, ' +
      "an unknown enum constructor). Check the rule's arguments against the template and " +
      'choice, then requeue the dead letter.' +
      (last === undefined ? '' : ` The participant said: ${last.message}`),
  };
}

/** "exercise Accept on #invoices:Invoice:Invoice", one per command, for messages. */
export function describeCommands(payload: SubmissionPayload): string {
  const parts = payload.commands.map((command) => {
    const entry: [string, unknown] = Object.entries(command as Record<string, unknown>)[0] ?? [
      'command',
      {},
    ];
    const [kind, body] = entry;
    const b = (body ?? {}) as { templateId?: unknown; choice?: unknown };
    const template = typeof b.templateId === 'string' ? b.templateId : '?';
    const verb = kind.replace(/Command$/, '');
    const lower = verb.charAt(0).toLowerCase() + verb.slice(1);
    return typeof b.choice === 'string'
      ? `${lower} ${b.choice} on ${template}`
      : `${lower} ${template}`;
  });
  return parts.join('; ');
}
