import type { Logger } from '../../core/logger.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { isTransientPackagesFailure } from '../../runtime/retry-packages-read.js';
import { BotCatalogue } from './bot-catalogue.js';
import { loadConfigRules, type LoadConfigRulesOptions } from './load-config-rules.js';

/** How long the one probe of the participant may take before the start takes the slow path. */
const PROBE_TIMEOUT_MS = 2_000;

export type FirstRuleCheckOptions = {
  /** The bot's catalogue: connected to the participant here when it answers at once. */
  readonly catalogue: BotCatalogue;
  /** What the loads share (environment, programs, checked files, compiled set, notes). */
  readonly load: Omit<LoadConfigRulesOptions, 'catalogue'>;
  readonly logger: Logger;
  readonly signal?: AbortSignal;
};

/**
 * `run`'s check of the rules against a participant (`ledger.url`), before anything is written
 * (the store, the bot): a mistake in them exits 2 with nothing started. When the participant
 * answers at once (one probe: the ledger end, and the user where there is auth), it is its own
 * check: the rules are compiled once, against every package it has (`participant: true`).
 * Otherwise (it does not answer yet, it refuses the bot, or reading its packages stumbles) they
 * are checked against the config's package files and models alone, and that set runs until the
 * participant's check (start-bot.ts, once it answers) replaces it.
 */
export async function firstRuleCheck(
  config: BotConfig,
  client: LedgerClient,
  options: FirstRuleCheckOptions,
): Promise<{ readonly ruleSet: RuleSet; readonly participant: boolean }> {
  const { catalogue, load, logger } = options;
  if (await answersAtOnce(config, client, options.signal)) {
    catalogue.connect(client);
    try {
      return { ruleSet: await loadConfigRules(config, { ...load, catalogue }), participant: true };
    } catch (err) {
      if (!isTransientPackagesFailure(err)) throw err;
    }
  }
  logger.info(
    {},
    "checking the rules against the config's packages while the participant cannot be asked",
  );
  // The offline packages only: a catalogue connected above would read the participant's too.
  const offline = catalogue.connected ? new BotCatalogue(config, logger) : catalogue;
  // Not the compiled set, nor the notes: the participant's load replaces this set, and says
  // the warnings of the one the bot runs.
  const { compiled: _set, onWarning: _warning, onIdle: _idle, ...rest } = load;
  return {
    ruleSet: await loadConfigRules(config, { ...rest, catalogue: offline }),
    participant: false,
  };
}

async function answersAtOnce(
  config: BotConfig,
  client: LedgerClient,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const call = { timeoutMs: PROBE_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) };
  try {
    await client.ledgerEnd(call);
    if (config.ledger.auth.type !== 'none') await client.getUser(config.ledger.userId, call);
    return true;
  } catch {
    return false; // the slow path's awaitParticipant says why, retries or gives up
  }
}
