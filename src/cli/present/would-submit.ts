import type { JsCommands } from '../../ledger/wire/wire-types.js';
import type { Intent } from '../../rules/evaluation-result.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { buildSubmission, payloadOf } from '../../runtime/submission-payload.js';

/** Shown where every real attempt carries a fresh UUID. */
export const FRESH_SUBMISSION_ID = '<fresh-uuid-per-attempt>';

/**
 * The `async/submit` body the bot would send for an intent on its first attempt, built by the
 * bot's own code (so it cannot drift from what `run` sends); only `submissionId` is a placeholder.
 */
export function wouldSubmit(intent: Intent, config: BotConfig): JsCommands {
  const dedup = config.submission.dedup;
  return buildSubmission(payloadOf(intent), {
    commandId: intent.commandId,
    userId: config.ledger.userId,
    submissionId: FRESH_SUBMISSION_ID,
    dedup:
      dedup.mode === 'duration'
        ? { kind: 'duration', ms: dedup.valueMs }
        : { kind: 'offset', offset: intent.offset },
  });
}

/** Pretty JSON, every line indented by `indent` spaces. */
export function indentJson(value: unknown, indent: number): string {
  const pad = ' '.repeat(indent);
  return JSON.stringify(value, null, 2)
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}
