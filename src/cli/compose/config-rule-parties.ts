import type { BotConfig } from '../../runtime/config/bot-config.js';

/**
 * The party aliases rules may use: the config's `parties`, and the embedded sandbox's aliases
 * (their ids are only known once the sandbox runs).
 */
export function configRuleParties(config: BotConfig): Record<string, string> {
  const embedded = config.ledger.endpoint.kind === 'embedded' ? config.ledger.endpoint.parties : [];
  return { ...Object.fromEntries(embedded.map((a) => [a, a])), ...config.parties };
}
