import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadRules, type LoadRulesOptions } from '../../src/rules/load-rules.js';
import { formatRuleProblem } from '../../src/rules/rule-problem.js';
import { INVOICES } from './invoices-catalogue.js';

const DIR = new URL('../fixtures/rules/invalid/', import.meta.url);

const OPTIONS: LoadRulesOptions = { parties: ['payer', 'issuer'], packages: INVOICES };

function load(names: string[], options: LoadRulesOptions = OPTIONS): string[] {
  const files = names.map((name) => ({
    path: name,
    text: readFileSync(new URL(name, DIR), 'utf8'),
  }));
  const { problems } = loadRules(files, options);
  return problems.map((p) => `${formatRuleProblem(p)} [${p.code}]`);
}

/** Every mistake a user can make, with the exact position, message, hint and code. */
const CASES: [string, string[]][] = [
  [
    'yaml-syntax.yaml',
    [
      'yaml-syntax.yaml:5:16: YAML syntax: this quote is never closed\n    hint: add the closing " at the end of the value [YAML_SYNTAX]',
    ],
  ],
  [
    'duplicate-key.yaml',
    [
      'duplicate-key.yaml:8:5: YAML syntax: Map keys must be unique\n    hint: each key may appear once per mapping; remove or rename the repeated one [YAML_SYNTAX]',
    ],
  ],
  [
    'empty-file.yaml',
    [
      'empty-file.yaml:1:1: the file is empty\n    hint: a rule file starts with `version: 1` and then `rules:` [WRONG_TYPE]',
    ],
  ],
  [
    'bad-version.yaml',
    [
      'bad-version.yaml:1:10: version 2 is not supported\n    hint: write `version: 1`, the only version of the rule language so far [UNSUPPORTED_VERSION]',
    ],
  ],
  [
    'unknown-key.yaml',
    [
      'unknown-key.yaml:8:9: unknown key "createAndExcercise" in the action\n    hint: did you mean "createAndExercise"? [UNKNOWN_KEY]',
    ],
  ],
  [
    'wrong-type.yaml',
    ['wrong-type.yaml:7:15: `revision` must be a whole number, not the text "two" [WRONG_TYPE]'],
  ],
  [
    'missing-trigger.yaml',
    [
      'missing-trigger.yaml:3:5: the rule has no trigger\n    hint: add `on:` (created, exercised or archived) to react to events, or `schedule:` to run on a cron schedule [TRIGGER]',
    ],
  ],
  [
    'no-trigger-event.yaml',
    [
      'no-trigger-event.yaml:5:7: `on` says nothing to react to\n    hint: add one of `created: "#pkg:Module:Entity"`, `exercised: {template, choice}` or `archived: "#pkg:Module:Entity"` [TRIGGER]',
    ],
  ],
  [
    'two-triggers.yaml',
    [
      'two-triggers.yaml:3:5: the rule has both `on` and `schedule`; a rule has exactly one trigger\n    hint: make two rules [TRIGGER]',
    ],
  ],
  [
    'for-each-on-event.yaml',
    [
      'for-each-on-event.yaml:7:5: `forEach` belongs to schedule rules\n    hint: an event rule reads the event itself (`event` in expressions); remove `forEach` or use `schedule:` [TRIGGER]',
    ],
  ],
  [
    'empty-then.yaml',
    [
      'empty-then.yaml:7:11: `then` is empty\n    hint: give at least one action; to switch a rule off, write `enabled: false` [BAD_VALUE]',
    ],
  ],
  [
    'missing-then.yaml',
    [
      'missing-then.yaml:3:5: the rule has no `then`\n    hint: add `then:` with a list of actions (createAndExercise, create, exercise or exerciseByKey) [MISSING_KEY]',
    ],
  ],
  [
    'no-command.yaml',
    [
      'no-command.yaml:8:9: the action has no command\n    hint: add one of `createAndExercise`, `create`, `exercise`, `exerciseByKey` [MISSING_KEY]',
    ],
  ],
  [
    'two-commands.yaml',
    [
      'two-commands.yaml:8:9: the action has 2 commands (create, exercise); an action submits exactly one\n    hint: split it into one action per command [SCHEMA]',
    ],
  ],
  [
    'missing-act-as.yaml',
    [
      'missing-act-as.yaml:8:9: the action has no `actAs`\n    hint: add `actAs: [alias]`: the party alias(es) that submit the command [MISSING_KEY]',
    ],
  ],
  [
    'bad-id.yaml',
    [
      'bad-id.yaml:3:9: rule id "Accept Invoices" is not a slug: use lowercase letters, digits, - and _, starting with a letter or digit\n    hint: did you mean "accept-invoices"? [BAD_RULE_ID]',
    ],
  ],
  [
    'long-id.yaml',
    [
      'long-id.yaml:3:9: rule id is 129 characters long; at most 128 are allowed\n    hint: the id is part of every command id, which the ledger caps at 255 characters [BAD_RULE_ID]',
    ],
  ],
  [
    'unknown-alias.yaml',
    [
      'unknown-alias.yaml:6:14: unknown party alias "payr"\n    hint: did you mean "payer"? [UNKNOWN_PARTY]',
    ],
  ],
  [
    'unquoted-hash-flow.yaml',
    [
      'unquoted-hash-flow.yaml:4:20: YAML syntax: # starts a comment here, so the { or [ before it is never closed\n    hint: quote a value that starts with #, e.g. "#invoices:Invoice:Invoice" [YAML_SYNTAX]',
    ],
  ],
  [
    'unquoted-hash-block.yaml',
    [
      'unquoted-hash-block.yaml:5:16: `created` must be text, not empty\n    hint: quote a value that starts with #: # starts a comment, e.g. created: "#invoices:Invoice:Invoice" [WRONG_TYPE]',
    ],
  ],
  [
    'party-vs-alias-text.yaml',
    [
      'party-vs-alias-text.yaml:5:32: field "payer" is a Daml Party, whose text is a party id ("Name::1220…"); "payer" is not one, so `==` is always false\n    hint: compare it with parties.payer if "payer" is a party alias of the config [TYPE_MISMATCH]',
    ],
  ],
  [
    'when-boolean.yaml',
    [
      'when-boolean.yaml:5:11: `when` must be a CEL expression (text) or a list of them, not the value true\n    hint: YAML read true as a boolean: quote it, when: "true"; a rule without `when` fires on every event it matches [WRONG_TYPE]',
    ],
  ],
  [
    'date-vs-text.yaml',
    [
      'date-vs-text.yaml:5:11: CEL: no such overload: google.protobuf.Timestamp < string\n    hint: a date or time compares with a date or time: date(event.createArgument.due) < date("2026-01-01"), timestamp(…) > now [CEL_COMPILE_ERROR]',
    ],
  ],
  [
    'misspelt-rules-key.yaml',
    [
      'misspelt-rules-key.yaml:2:1: unknown key "rule" at the top of the file\n    hint: did you mean "rules"? [UNKNOWN_KEY]',
    ],
  ],
  [
    'unknown-alias-in-cel.yaml',
    [
      'unknown-alias-in-cel.yaml:7:49: unknown party alias "payr"\n    hint: did you mean "payer"? [UNKNOWN_PARTY]',
      'unknown-alias-in-cel.yaml:7:57: unknown party alias "isuer"\n    hint: did you mean "issuer"? [UNKNOWN_PARTY]',
      'unknown-alias-in-cel.yaml:13:57: unknown party alias "auditor"\n    hint: the config defines: issuer, payer [UNKNOWN_PARTY]',
    ],
  ],
  [
    'bad-cron.yaml',
    [
      'bad-cron.yaml:5:26: bad cron expression "0 9 * * MON-FRY": "FRY" is not a valid day of week: the day of week field takes 0-7 or SUN-SAT\n    hint: e.g. "0 9 * * MON-FRI" is 9:00 on weekdays, "*/15 * * * *" every 15 minutes [BAD_CRON]',
    ],
  ],
  [
    'bad-timezone.yaml',
    [
      'bad-timezone.yaml:6:17: unknown time zone "Europe/Zurik"\n    hint: did you mean "Europe/Zurich"? [BAD_TIMEZONE]',
    ],
  ],
  [
    'catch-up-typo.yaml',
    [
      'catch-up-typo.yaml:4:42: `catchUp` must be one of none, last, all, not the text "lats" [BAD_VALUE]',
    ],
  ],
  [
    'bad-duration.yaml',
    [
      'bad-duration.yaml:7:44: "5 seconds" is not a duration\n    hint: write a number with a unit: ms, s, m, h, d or w, e.g. 30s, 5m or 1h30m [BAD_DURATION]',
    ],
  ],
  [
    'delays-reversed.yaml',
    [
      'delays-reversed.yaml:9:17: retry.maxDelay (1s) is shorter than retry.initialDelay (10s)\n    hint: maxDelay caps the growing delay between retries, so it is at least initialDelay [BAD_VALUE]',
    ],
  ],
  [
    'template-in-when.yaml',
    [
      'template-in-when.yaml:7:12: "${{ }}" is not allowed in `when`\n    hint: `when` is already an expression: write it without "${{ }}", e.g. `when: event.createArgument.amount > 0` [TEMPLATE_NOT_ALLOWED]',
    ],
  ],
  [
    'template-in-choice.yaml',
    [
      'template-in-choice.yaml:11:20: "${{ }}" is not allowed in `choice`\n    hint: "${{ }}" works only in action arguments (createArguments, choiceArgument, contractId, contractKey), workflowId and disclosedContracts [TEMPLATE_NOT_ALLOWED]',
    ],
  ],
  [
    'unclosed-template.yaml',
    [
      'unclosed-template.yaml:10:24: "${{" is not closed: end the expression with "}}"\n    hint: write "${{ expression }}", e.g. "${{ event.contractId }}" [BAD_TEMPLATE]',
    ],
  ],
  ['cel-syntax.yaml', ['cel-syntax.yaml:9:47: CEL: Unexpected token: EOF [CEL_COMPILE_ERROR]']],
  [
    'single-equals.yaml',
    [
      'single-equals.yaml:7:41: CEL: Unexpected character: =\n    hint: compare with == (a single = is not an operator) [CEL_COMPILE_ERROR]',
    ],
  ],
  [
    'cel-type-error.yaml',
    ['cel-type-error.yaml:7:46: CEL: no such overload: int + string [CEL_COMPILE_ERROR]'],
  ],
  [
    'unknown-variable.yaml',
    [
      'unknown-variable.yaml:7:12: CEL: Unknown variable: evnt\n    hint: did you mean "event"? [CEL_COMPILE_ERROR]',
    ],
  ],
  [
    'event-in-schedule.yaml',
    [
      'event-in-schedule.yaml:6:11: CEL: Unknown variable: event\n    hint: schedule rules have no `event`: use `contract`, the active contract of this iteration [CEL_COMPILE_ERROR]',
    ],
  ],
  [
    'unknown-function.yaml',
    [
      'unknown-function.yaml:7:12: CEL: found no matching overload for \'exec(string)\'\n    hint: "exec" is not a function; available: decimal, sum, date, damlDate, timestamp, duration, size, has, int, uint, double, string, bool, bytes, dyn, type, matches, contains, startsWith, endsWith [CEL_COMPILE_ERROR]',
    ],
  ],
  [
    'interpolation-error.yaml',
    ['interpolation-error.yaml:11:97: CEL: Expected IDENTIFIER, got EOF [CEL_COMPILE_ERROR]'],
  ],
  [
    'bad-template-ref.yaml',
    [
      'bad-template-ref.yaml:5:16: "invoices.Invoice.Invoice" is not a template reference\n    hint: write "#package-name:Module:Entity", e.g. "#invoices:Invoice:Invoice" (quote it: # starts a comment in YAML) [BAD_TEMPLATE_REF]',
    ],
  ],
  [
    'unknown-template.yaml',
    [
      'unknown-template.yaml:5:16: unknown template "#invoices:Invoice:Invoce": package "invoices" has no template or interface Invoice:Invoce\n    hint: did you mean "#invoices:Invoice:Invoice"? [UNKNOWN_TEMPLATE]',
    ],
  ],
  [
    'unknown-choice.yaml',
    [
      'unknown-choice.yaml:11:19: template Invoice:Invoice has no choice "Acept"\n    hint: did you mean "Accept"? [UNKNOWN_CHOICE]',
    ],
  ],
  [
    'by-key-without-key.yaml',
    [
      'by-key-without-key.yaml:9:21: template Payment:Payment has no contract key, so exerciseByKey cannot find its contracts\n    hint: use `exercise` with a contractId instead [UNKNOWN_TEMPLATE]',
    ],
  ],
];

describe('loadRules: every user mistake, with file:line:col, message and hint', () => {
  it.each(CASES)('%s', (name, expected) => {
    expect(load([name])).toEqual(expected);
  });

  it('names both places of a duplicate id across two files', () => {
    expect(load(['duplicate-id-a.yaml', 'duplicate-id-b.yaml'])).toEqual([
      'duplicate-id-b.yaml:14:9: duplicate rule id "same-id": it is also used at duplicate-id-a.yaml:3:9\n    hint: rule ids are unique across all rule files; rename one of them [DUPLICATE_RULE_ID]',
    ]);
  });

  it('warns about package-id references but loads the rule', () => {
    const text = readFileSync(new URL('package-id-ref.yaml', DIR), 'utf8');
    const { problems, ruleSet } = loadRules([{ path: 'p.yaml', text }], { parties: ['payer'] });
    expect(problems.map((p) => [p.line, p.col, p.severity, p.code])).toEqual([
      [5, 16, 'warning', 'PACKAGE_ID_REF'],
    ]);
    expect(problems[0]!.hint).toBe(
      'write "#<package-name>:Invoice:Invoice": package-name references keep matching after package upgrades',
    );
    expect(ruleSet.rules).toHaveLength(1);
    expect(ruleSet.warnings).toEqual(problems);
    const trigger = ruleSet.rules[0]!.trigger;
    expect(trigger.kind === 'created' && trigger.template).toMatchObject({
      form: 'package-id',
      packageId: 'ab'.repeat(32),
      qualifiedName: 'Invoice:Invoice',
    });
  });

  it('does not check aliases without a party list, nor templates without a catalogue', () => {
    expect(load(['unknown-alias.yaml'], {})).toEqual([]);
    expect(load(['unknown-template.yaml'], {})).toEqual([]);
  });

  it('checks aliases against the keys of a parties map', () => {
    expect(
      load(['unknown-alias.yaml'], { parties: { payer: 'P::1', issuer: 'I::2' } }),
    ).toHaveLength(1);
    expect(load(['unknown-alias.yaml'], { parties: { payr: 'P::1', payer: 'P::2' } })).toEqual([]);
  });

  it('reports all problems of all files at once, each file in order', () => {
    const files = ['wrong-type.yaml', 'unknown-alias.yaml', 'bad-cron.yaml'].map((name) => ({
      path: name,
      text: readFileSync(new URL(name, DIR), 'utf8'),
    }));
    const { problems, ruleSet } = loadRules(files, OPTIONS);
    // The fixtures all use the id r1, so the second and third files also repeat it.
    expect(problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.code}`)).toEqual([
      'wrong-type.yaml:7:15 WRONG_TYPE',
      'unknown-alias.yaml:3:9 DUPLICATE_RULE_ID',
      'unknown-alias.yaml:6:14 UNKNOWN_PARTY',
      'bad-cron.yaml:3:9 DUPLICATE_RULE_ID',
      'bad-cron.yaml:5:26 BAD_CRON',
    ]);
    expect(ruleSet.rules).toEqual([]);
  });

  it('reports several problems of one rule together', () => {
    const text = [
      'version: 1',
      'rules:',
      '  - id: Many',
      '    on: { created: "#invoices:Invoice:Invoice", party: nobody }',
      '    when: evnt.x',
      '    then: [{ exercise: { template: "#invoices:Invoice:Invoice", contractId: x, choice: Nope }, actAs: [ghost] }]',
      '    colour: blue',
      '',
    ].join('\n');
    const { problems } = loadRules([{ path: 'm.yaml', text }], OPTIONS);
    expect(problems.map((p) => `${p.line}:${p.col} ${p.code}`)).toEqual([
      '3:9 BAD_RULE_ID',
      '4:56 UNKNOWN_PARTY',
      '5:11 CEL_COMPILE_ERROR',
      '6:88 UNKNOWN_CHOICE',
      '6:104 UNKNOWN_PARTY',
      '7:5 UNKNOWN_KEY',
    ]);
  });
});
