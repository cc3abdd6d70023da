import { join, relative } from 'node:path';
import { loadRules } from '../../rules/load-rules.js';
import { formatRuleProblem } from '../../rules/rule-problem.js';
import { defineCommand } from '../define-command.js';
import { colourFor, NO_COLOR_OPTION, paintProblems } from '../present/colour.js';
import type { ConfigProblem } from '../../runtime/config/config-error.js';
import { readConfig } from '../compose/read-config.js';
import { readRuleFiles } from '../compose/read-rule-files.js';
import { readRuleCatalogue } from '../compose/read-rule-catalogue.js';
import { idleRuleSetWarning, noRuleFilesMessage } from '../compose/rule-set-notes.js';
import { UsageError } from '../usage-error.js';

export const validateCommand = defineCommand({
  name: 'validate',
  summary: 'check rule files and print every problem with file:line:col',
  usage: `validate [--config bot.config.yaml] [--dar FILE]... [--model model.yaml]... [--offline] [--format text|json] [paths...]`,
  description: `Checks rule files and prints every problem as file:line:col: message. Submits nothing.
A directory is loaded whole (its *.yaml and *.yml files, not *.test.yaml); without paths,
the config's \`rules:\` entry or ./rules is used.

Rules are type-checked (templates, interfaces, choices, field paths, command arguments)
against the Daml packages given: the config's \`ledger.packages\`, its embedded models, and,
when the config has a \`url\`, every package of the participant (downloaded once, then read
from state.dir/packages/); plus --dar and --model. A note says where the types came from.`,
  options: {
    config: {
      type: 'string',
      value: 'FILE',
      help: `bot config (validated too): aliases are checked against its \`parties:\`\nand embedded aliases, rules against its packages, models and participant`,
    },
    dar: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'a DAR or DALF file, or a directory of them: rules are checked against\nits packages (repeatable)',
    },
    model: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'sandbox model: unknown templates and choices are reported (repeatable)',
    },
    offline: {
      type: 'boolean',
      default: false,
      help: "do not read the participant's packages (only the config's files and models)",
    },
    format: { type: 'string', default: 'text', value: 'FORMAT', help: 'text (default) or json' },
    'strict-env': {
      type: 'boolean',
      help: 'an unset environment variable in a secret field of the config (ledger.auth,\nledger.tls, http.token) is an error too; without it, a note (validate needs\nno credentials; run does)',
    },
    ...NO_COLOR_OPTION,
  },
  positionals: true,
  footer: `Exit status: 0 when every file is valid (warnings allowed), 2 otherwise.`,
  run: async ({ values, positionals }, io) => {
    const format = values.format;
    if (format !== 'text' && format !== 'json') {
      throw new UsageError(`--format must be text or json, not "${format}"`);
    }
    // The real config loader: a broken config is reported (exit 2) before the rules are checked.
    // Credentials are for `run`: an unset secret is a note unless --strict-env.
    const unsetSecrets: ConfigProblem[] = [];
    const config =
      values.config === undefined
        ? undefined
        : await readConfig(
            values.config,
            process.env,
            values['strict-env'] === true ? {} : { onUnsetSecret: (p) => unsetSecrets.push(p) },
          );
    const embedded =
      config?.ledger.endpoint.kind === 'embedded' ? config.ledger.endpoint : undefined;
    const paths =
      positionals.length > 0
        ? positionals
        : (config?.rules.map((p) => relative(process.cwd(), p) || '.') ?? [join('.', 'rules')]);
    const files = await readRuleFiles(paths);
    // As `run` does: nothing to load is an error, not an empty valid set.
    if (files.length === 0) throw new UsageError(noRuleFilesMessage(paths));
    // The packages the bot will run against: the config's files, models and participant.
    const types = await readRuleCatalogue(config, {
      dars: values.dar ?? [],
      models: values.model ?? [],
      offline: values.offline,
      ...(unsetSecrets.length === 0
        ? {}
        : { skipParticipant: 'the credentials of `ledger.auth`/`ledger.tls` are not set' }),
    });
    const packages = types.loaded?.catalogue;
    const parties =
      config === undefined
        ? undefined
        : [...Object.keys(config.parties), ...(embedded?.parties ?? [])];
    const { ruleSet, problems } = loadRules(files, {
      ...(parties === undefined ? {} : { parties }),
      ...(packages === undefined ? {} : { packages }),
      ...(config === undefined ? {} : { defaultRetry: config.submission.retry }),
    });
    const notes: string[] = unsetSecrets.map(
      (p) =>
        `${p.file}:${p.line}:${p.col}: ${p.message} (${p.path}): not needed to validate, \`run\` needs it (--strict-env makes it an error)`,
    );
    if (config === undefined) {
      notes.push('party aliases were not checked: pass --config bot.config.yaml to check them');
    }
    if (packages === undefined) {
      notes.push(
        'templates and choices were not checked: pass --dar FILE or --model FILE (or a config with packages) to check them',
      );
    }
    notes.push(...types.notes);
    const errors = problems.filter((p) => p.severity === 'error').length;
    const warnings = problems.length - errors;
    // No enabled rule is valid (`run` starts idle) but worth a warning.
    const idle = errors === 0 ? idleRuleSetWarning(ruleSet, files.length) : undefined;
    if (idle !== undefined) notes.push(idle);
    notes.push(...types.warnings);
    const warned = new Set([...(idle === undefined ? [] : [idle]), ...types.warnings]);
    if (format === 'json') {
      io.out(
        `${JSON.stringify(
          {
            valid: errors === 0,
            files: files.map((f) => f.path),
            rules: errors === 0 ? ruleSet.rules.map((r) => r.id) : [],
            errors,
            warnings,
            problems,
            notes,
          },
          null,
          2,
        )}\n`,
      );
    } else {
      const c = colourFor(io, values['no-color']);
      for (const p of problems) io.out(`${paintProblems(formatRuleProblem(p), c)}\n`);
      for (const note of notes) {
        if (warned.has(note)) io.out(`${c.yellow('warning:')} ${note}\n`);
        else io.err(`note: ${note}\n`);
      }
      io.out(
        errors === 0
          ? `${files.length} file(s), ${ruleSet.rules.length} rule(s): ${c.green('valid')}${warnings > 0 ? ` (${c.yellow(`${warnings} warning(s)`)})` : ''}\n`
          : `${files.length} file(s): ${c.red(`${errors} error(s)`)}, ${warnings} warning(s)\n`,
      );
    }
    return errors === 0 ? 0 : 2;
  },
});
