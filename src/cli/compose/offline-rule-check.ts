import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../core/logger.js';
import { sha256Hex } from '../../core/sha256-hex.js';
import { writeFileAtomically } from '../../core/write-file-atomically.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { BotCatalogue } from './bot-catalogue.js';
import { loadConfigRules, type LoadConfigRulesOptions } from './load-config-rules.js';
import { readRuleFiles } from './read-rule-files.js';
import { ruleInputsKey } from './rule-inputs-key.js';

/**
 * `<state.dir>/rule-check.json`: the key of the inputs whose rules last passed `run`'s offline
 * check (the check against the config's packages that exits 2 before anything connects). The
 * check is deterministic in those inputs, so a start whose key matches skips it and goes
 * straight to the check against the participant's packages (which still exits 2 on an error).
 * Anything else in the file (missing, corrupt, another key) means the check runs.
 */
export const RULE_CHECK_FILE = 'rule-check.json';

const FORMAT = 'ledgerbot-rule-check/1';

export type OfflineCheckOptions = LoadConfigRulesOptions & {
  readonly catalogue: BotCatalogue;
  readonly version: string;
  readonly logger: Logger;
  /** Read only: the record is not written (a shadow bot writes nothing to its state directory). */
  readonly readOnly?: boolean;
};

/** How many offline checks were skipped in this process (for tests: not timed, observed). */
export const offlineCheckStats = { skipped: 0 };

/**
 * `run`'s offline check of the config's rules, skipped when the state directory records that
 * these very inputs passed it: then undefined (the caller's participant load checks and
 * compiles them). Otherwise the rules checked and compiled as by `loadConfigRules` (its
 * UsageError on a problem), and the record written.
 */
export async function checkRulesOffline(
  config: BotConfig,
  options: OfflineCheckOptions,
): Promise<RuleSet | undefined> {
  const files = await readRuleFiles(config.rules);
  const loaded = files.length === 0 ? undefined : await options.catalogue.read();
  const key =
    files.length === 0 ? undefined : await ruleInputsKey(config, files, loaded, options.version);
  const file = join(config.state.dir, RULE_CHECK_FILE);
  if (key !== undefined && recordedKey(file) === checkKey(key)) {
    offlineCheckStats.skipped += 1;
    options.logger.debug({ file }, 'offline rule check skipped: these inputs passed it before');
    return undefined;
  }
  const ruleSet = await loadConfigRules(config, { ...options, offline: { files, loaded } });
  if (key !== undefined && options.readOnly !== true) writeRecord(file, checkKey(key), options);
  return ruleSet;
}

/** The record's key: the inputs' key for this purpose. */
function checkKey(inputsKey: string): string {
  return sha256Hex(`${FORMAT}\n${inputsKey}`);
}

function recordedKey(file: string): string | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as { format?: unknown; key?: unknown };
    return record.format === FORMAT && typeof record.key === 'string' ? record.key : undefined;
  } catch {
    return undefined;
  }
}

/** Written atomically; a failure is logged, not fatal. */
function writeRecord(file: string, key: string, options: OfflineCheckOptions): void {
  try {
    writeFileAtomically(file, `${JSON.stringify({ format: FORMAT, key })}\n`);
  } catch (err) {
    options.logger.warn(
      { file, error: (err as Error).message },
      'offline rule check not recorded; the next start checks the rules again',
    );
  }
}
