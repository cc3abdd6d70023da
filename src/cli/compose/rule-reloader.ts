import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from '../../core/logger.js';
import type { RuleProblem } from '../../rules/rule-problem.js';
import type { RuleSet } from '../../rules/compiled-rule.js';
import type { Bot } from '../../runtime/bot.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { ReloadOutcome } from '../../runtime/ops/reload-history.js';
import { BotCatalogue } from './bot-catalogue.js';
import {
  loadConfigRules,
  ruleNoteLoggers,
  type LoadConfigRulesOptions,
} from './load-config-rules.js';

/**
 * Re-reads and validates every rule file of the config and, only if all are valid, swaps them
 * into the bot at once (`bot.reloadRules`). Otherwise the old rules keep running and each
 * problem is logged with file:line:col. Calls are serialised: a reload never overlaps another.
 */
export function ruleReloader(
  config: BotConfig,
  bot: Bot,
  logger: Logger,
  catalogue: BotCatalogue = new BotCatalogue(config, logger),
  shared: Pick<LoadConfigRulesOptions, 'cel' | 'programs' | 'sourceCache' | 'compiled'> = {},
  /** The rules to run of those loaded (a fleet member runs the rules it owns). */
  select: (ruleSet: RuleSet) => RuleSet = (ruleSet) => ruleSet,
  /** Runs before a valid set is taken (a fleet member records where its new rules begin). */
  prepare?: (ruleSet: RuleSet) => Promise<void>,
): () => Promise<ReloadOutcome> {
  const log = logger.child({ component: 'reload' });
  const notes = ruleNoteLoggers(config, log);
  let chain: Promise<unknown> = Promise.resolve();
  const reloadOnce = async (): Promise<ReloadOutcome> => {
    const warnings: RuleProblem[] = [];
    let errors: string[];
    try {
      // The packages are read again: the participant's new ones join (a rule that no longer
      // type-checks, e.g. against a package that changed, is a rejected reload).
      const ruleSet = await loadConfigRules(config, {
        catalogue,
        ...shared,
        onWarning: (w) => warnings.push(w),
        // A reload that leaves no rule enabled is applied (the bot idles) but said, as at start.
        onIdle: notes.onIdle,
      });
      for (const w of warnings) notes.onWarning(w);
      await prepare?.(ruleSet);
      const diff = bot.reloadRules(select(ruleSet));
      return { applied: true, diff };
    } catch (err) {
      // A UsageError lists its problems after its first line, each `file:line:col: …` with
      // its indented `hint:` lines under it: one problem each, hints included.
      const lines = (err as Error).message.split('\n');
      errors = [];
      for (const line of lines.length > 1 ? lines.slice(1) : lines) {
        if (/^\s/.test(line) && errors.length > 0) errors[errors.length - 1] += `\n${line}`;
        else errors.push(line);
      }
    }
    bot.metrics.reloads.rejected += 1;
    for (const e of errors) log.error({ problem: e }, 'rule problem');
    log.error(
      { problems: errors.length },
      'rule reload rejected; the old rules keep running. Fix the files and save again (or send SIGHUP)',
    );
    return { applied: false, errors };
  };
  return () => {
    const next = chain.then(reloadOnce, reloadOnce);
    chain = next.catch(() => undefined);
    return next;
  };
}

/**
 * Watches the rule files and directories and calls `onChange` once things are quiet for
 * `debounceMs` (editors write a file in several steps). Returns the function that stops it.
 */
export function watchRuleFiles(
  paths: readonly string[],
  onChange: () => void,
  logger: Logger,
  debounceMs = 300,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  const changed = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      onChange();
    }, debounceMs);
  };
  for (const path of paths) {
    try {
      // A file is watched through its directory: editors often save by renaming a new file over
      // the old one, which ends a watch on the file itself.
      const isDir = statSync(path).isDirectory();
      const name = basename(path);
      const w = watch(isDir ? path : dirname(path), { persistent: false }, (_event, file) => {
        if (isDir || file === null || file === name) changed();
      });
      w.on('error', (err) => logger.warn({ path, error: err.message }, 'cannot watch rule files'));
      watchers.push(w);
    } catch (err) {
      logger.warn({ path, error: (err as Error).message }, 'cannot watch rule files');
    }
  }
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
