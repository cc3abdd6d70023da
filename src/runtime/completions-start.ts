import type { IntentRecord } from '../store/store.js';

/** Where a completions stream begins, and whose completions it follows. */
export type CompletionsStart = {
  readonly begin: number;
  readonly parties: readonly string[];
};

/**
 * The completions stream of a start that finds `open` intents in the journal. Completions of
 * intents submitted before a restart come after their justifying offset, so the stream starts no
 * later than the oldest open intent's offset; otherwise at the ledger end, which is before any
 * submission this run makes. It follows the parties the rules act as and those of the open
 * intents (a rule since removed or changed may have acted as others).
 */
export function completionsStart(
  ledgerEnd: number,
  open: readonly Pick<IntentRecord, 'offset' | 'actAs'>[],
  actAsParties: readonly string[],
): CompletionsStart {
  let begin = ledgerEnd;
  for (const intent of open) if (intent.offset < begin) begin = intent.offset;
  return { begin, parties: [...actAsParties, ...open.flatMap((i) => i.actAs)] };
}
