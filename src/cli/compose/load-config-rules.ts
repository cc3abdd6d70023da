import { silentLogger, type Logger } from '../../core/logger.js';
import type { CelEnvironment } from '../../rules/cel/cel-environment.js';
import type { CelProgramCache } from '../../rules/cel-program-cache.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import { loadRules } from '../../rules/load-rules.js';
import { formatRuleProblem, type RuleProblem } from '../../rules/rule-problem.js';
import type { RuleSourceCache } from '../../rules/rule-source-cache.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { idleRuleSetWarning, noRuleFilesMessage } from './rule-set-notes.js';
import { UsageError } from '../usage-error.js';
import { readRuleFiles } from './read-rule-files.js';
import { BotCatalogue } from './bot-catalogue.js';
import type { CompiledRulesFile } from './compiled-rules-file.js';
import { configRuleParties } from './config-rule-parties.js';
import { ruleInputsKey } from './rule-inputs-key.js';

export type LoadConfigRulesOptions = {
  /**
   * The packages to check the rules against (and to tell templates from interfaces); default:
   * the config's `ledger.packages` and embedded models (a fresh `BotCatalogue`, not connected
   * to the participant).
   */
  readonly catalogue?: BotCatalogue;
  readonly onWarning?: (warning: RuleProblem) => void;
  /** A set with no enabled rule: the warning to log. */
  readonly onIdle?: (warning: string) => void;
  /** One environment for every load of a process (building one is expensive). */
  readonly cel?: CelEnvironment;
  /** The CEL programs of the load before (its environment is then the one used). */
  readonly programs?: CelProgramCache;
  /**
   * The checked form of unchanged rule files (the state directory's rule cache); `save` is
   * called after a load without errors.
   */
  readonly sourceCache?: RuleSourceCache & { save(): void };
  /**
   * The rule set last compiled (the state directory's `compiled-rules.json`): taken instead of
   * loading when it was compiled from the same inputs (`ruleInputsKey`), and written after a
   * load without errors. Used with `cel` or `programs` only (its programs are of that
   * environment).
   */
  readonly compiled?: CompiledRulesFile;
};

/**
 * Reads and compiles the rule files a bot config names, checking party aliases against the
 * config (embedded aliases count, although their ids are only known once the sandbox runs) and
 * every template, interface, choice, field and argument against the catalogue's packages.
 * Errors become a UsageError listing every problem with file:line:col; so does finding no rule
 * file at all, and a package file that cannot be read. A set with no enabled rule is valid.
 */
export async function loadConfigRules(
  config: BotConfig,
  options: LoadConfigRulesOptions = {},
): Promise<RuleSet> {
  const onWarning = options.onWarning ?? (() => undefined);
  const onIdle = options.onIdle ?? (() => undefined);
  const files = await readRuleFiles(config.rules);
  if (files.length === 0) {
    throw new UsageError(`${noRuleFilesMessage(config.rules)} (\`rules:\` of ${config.file})`);
  }
  const parties = configRuleParties(config);
  const catalogue = options.catalogue ?? new BotCatalogue(config, silentLogger);
  const loaded = await catalogue.read();
  const packages = loaded?.catalogue;
  const cel = options.programs?.environment ?? options.cel;
  const compiled =
    options.compiled === undefined || cel === undefined
      ? undefined
      : {
          file: options.compiled,
          key: await ruleInputsKey(config, files, loaded, options.compiled.version),
        };
  const cached = compiled?.file.get(compiled.key, cel!);
  if (cached !== undefined) return noted(cached, files.length, onWarning, onIdle);
  const { ruleSet, problems } = loadRules(files, {
    parties,
    defaultRetry: config.submission.retry,
    ...(packages === undefined ? {} : { packages }),
    ...(options.cel === undefined ? {} : { cel: options.cel }),
    ...(options.programs === undefined ? {} : { programs: options.programs }),
    ...(options.sourceCache === undefined ? {} : { sourceCache: options.sourceCache }),
  });
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) {
    throw new UsageError(
      [
        `the rule files of ${config.file} have ${errors.length} problem(s); run \`ledgerbot validate --config ${config.file}\`:`,
        ...errors.slice(0, 20).map(formatRuleProblem),
      ].join('\n'),
    );
  }
  options.sourceCache?.save();
  compiled?.file.set(compiled.key, ruleSet, cel!);
  return noted(ruleSet, files.length, onWarning, onIdle);
}

/** The set, after its warnings (those of every rule in it) and whether it is idle are told. */
function noted(
  ruleSet: RuleSet,
  files: number,
  onWarning: (warning: RuleProblem) => void,
  onIdle: (warning: string) => void,
): RuleSet {
  for (const p of ruleSet.warnings) onWarning(p);
  const idle = idleRuleSetWarning(ruleSet, files);
  if (idle !== undefined) onIdle(idle);
  return ruleSet;
}

/** `loadConfigRules`' notes as log lines: constant messages, the details in fields. */
export function ruleNoteLoggers(
  config: BotConfig,
  logger: Logger,
): { onWarning: (warning: RuleProblem) => void; onIdle: (note: string) => void } {
  return {
    onWarning: (w) =>
      logger.warn({ file: w.file, line: w.line, col: w.col, warning: w.message }, 'rule warning'),
    onIdle: (note) => logger.warn({ rules: config.rules, note }, 'no rule is enabled'),
  };
}
