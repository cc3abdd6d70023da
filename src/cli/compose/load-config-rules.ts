import type { Logger } from '../../core/logger.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import { loadRules } from '../../rules/load-rules.js';
import { formatRuleProblem, type RuleProblem } from '../../rules/rule-problem.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { idleRuleSetWarning, noRuleFilesMessage } from './rule-set-notes.js';
import { UsageError } from '../usage-error.js';
import { readRuleFiles } from './read-rule-files.js';

/**
 * Reads and compiles the rule files a bot config names, checking party aliases against the
 * config (embedded aliases count, although their ids are only known once the sandbox runs).
 * Errors become a UsageError listing every problem with file:line:col; so does finding no rule
 * file at all. A set with no enabled rule is valid: `onIdle` gets the warning to log.
 */
export async function loadConfigRules(
  config: BotConfig,
  onWarning: (warning: RuleProblem) => void = () => undefined,
  onIdle: (warning: string) => void = () => undefined,
): Promise<RuleSet> {
  const files = await readRuleFiles(config.rules);
  if (files.length === 0) {
    throw new UsageError(`${noRuleFilesMessage(config.rules)} (\`rules:\` of ${config.file})`);
  }
  const embedded = config.ledger.endpoint.kind === 'embedded' ? config.ledger.endpoint.parties : [];
  const parties = { ...Object.fromEntries(embedded.map((a) => [a, a])), ...config.parties };
  const { ruleSet, problems } = loadRules(files, {
    parties,
    defaultRetry: config.submission.retry,
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
  for (const p of problems) if (p.severity === 'warning') onWarning(p);
  const idle = idleRuleSetWarning(ruleSet, files.length);
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
