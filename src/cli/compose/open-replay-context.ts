import type { RuleSet } from '../../rules/compiled-rule.js';
import { indexRules, type RuleIndex } from '../../rules/rule-index.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { planSubscription, type SubscriptionPlan } from '../../runtime/subscription-plan.js';
import type { UpdateFormat } from '../../ledger/wire/wire-types.js';
import { IllegalStateError } from '../../core/illegal-state-error.js';
import { silentLogger } from '../../core/logger.js';
import { BotCatalogue } from './bot-catalogue.js';
import { loadConfigRules } from './load-config-rules.js';
import { openConfigLedger, type ConfigLedger } from './open-config-ledger.js';
import { readConfig } from './read-config.js';
import { UsageError } from '../usage-error.js';

/** What `explain` and `backtest` read the ledger with: the bot's config, rules and filter. */
export type ReplayContext = {
  readonly config: BotConfig;
  readonly rules: RuleSet;
  /** The package names of the participant's packages, for interface rules (as the bot has). */
  readonly packageNameOf: (packageId: string) => string | undefined;
  readonly index: RuleIndex;
  readonly plan: SubscriptionPlan;
  /** The bot's own update format: the replay sees exactly what the bot sees. */
  readonly updateFormat: UpdateFormat;
  readonly ledger: ConfigLedger;
  close(): Promise<void>;
};

/**
 * Reads the config and rules and connects to the participant, for commands that look at ledger
 * history through the rules without submitting. An embedded sandbox lives inside the running bot
 * and starts empty, so there is no history to look at: that is a usage error.
 */
export async function openReplayContext(
  configPath: string,
  command: string,
): Promise<ReplayContext> {
  const config = await readConfig(configPath);
  if (config.ledger.endpoint.kind === 'embedded') {
    throw new UsageError(
      `${config.file} uses an embedded sandbox, which starts empty and lives inside the running bot; ` +
        `${command} needs a participant with history: set ledger.url to it`,
    );
  }
  // A mistake in the rules, or nothing to replay, is said before the participant is asked.
  const catalogue = new BotCatalogue(config, silentLogger);
  const offline = await loadConfigRules(config, { catalogue });
  if (planSubscription(offline, config.parties).updateFormat === null) {
    throw new UsageError(
      `no enabled rule of ${config.file} reacts to ledger events (schedule rules only), so there is nothing to ${command}; for schedule rules use \`ledgerbot run-slot --dry-run\``,
    );
  }
  // Then compiled against the participant's packages too, as the bot compiles them (the filter
  // of an interface rule is an interface filter).
  const ledger = await openConfigLedger(config);
  let rules: RuleSet;
  let plan: SubscriptionPlan;
  try {
    catalogue.connect(ledger.client);
    rules = await loadConfigRules(config, { catalogue });
    plan = planSubscription(rules, config.parties);
  } catch (err) {
    await ledger.close();
    throw err;
  }
  if (plan.updateFormat === null) {
    await ledger.close();
    throw new IllegalStateError('the rules lost their event filter once the packages were read');
  }
  return {
    config,
    rules,
    packageNameOf: catalogue.packageNameOf,
    index: indexRules(rules),
    plan,
    updateFormat: plan.updateFormat,
    ledger,
    close: () => ledger.close(),
  };
}
