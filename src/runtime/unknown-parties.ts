import type { Logger } from '../core/logger.js';
import type { CallOptions } from '../ledger/http-transport.js';

/** What the check reads of the participant. */
export type PartyLookup = {
  getParties(
    party: string,
    more?: readonly string[],
    options?: CallOptions,
  ): Promise<{ partyDetails?: readonly { party?: string }[] }>;
};

/**
 * The aliases of `parties` whose ids the participant does not know (a typo, a party of another
 * network), each logged as a warning: the bot runs, but a rule reading as such a party sees
 * nothing and a command acting as it is refused. Undefined when the participant does not say
 * (the call needs admin rights a bot's user seldom has, or it failed): nothing is logged then
 * but a debug line. Never throws.
 */
export async function warnUnknownParties(
  ledger: PartyLookup,
  parties: Readonly<Record<string, string>>,
  logger: Logger,
  options: CallOptions = {},
): Promise<string[] | undefined> {
  const ids = [...new Set(Object.values(parties))];
  const [first, ...rest] = ids;
  if (first === undefined) return [];
  let known: Set<string>;
  try {
    const answer = await ledger.getParties(first, rest, options);
    known = new Set((answer.partyDetails ?? []).map((d) => d.party ?? ''));
  } catch (err) {
    logger.debug(
      { error: err instanceof Error ? err.message : String(err) },
      "the participant's parties could not be read; the configured party ids are not checked",
    );
    return undefined;
  }
  const unknown = Object.entries(parties).filter(([, id]) => !known.has(id));
  for (const [alias, party] of unknown) {
    logger.warn(
      { alias, party },
      `the participant does not know party ${party} (alias ${alias}): rules that read as it see nothing, and commands acting as it are refused; check parties: in the config`,
    );
  }
  return unknown.map(([alias]) => alias);
}
