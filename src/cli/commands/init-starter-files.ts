// The starter files `ledgerbot init` writes besides the config: one example rule, its unit
// tests, the sandbox model it runs against, and the .gitignore entry for the state directory.
// They are plain text, not generated YAML, because their comments are half their value: a
// business user reads them to learn how a rule works.

/** Where each starter file goes, relative to the project directory. */
export const STARTER_PATHS = {
  config: 'bot.config.yaml',
  rule: 'rules/approve-small-claims.yaml',
  test: 'tests/approve-small-claims.test.yaml',
  model: 'models/starter.yaml',
  schema: 'schema/rules.schema.json',
  testSchema: 'schema/rule-tests.schema.json',
  configSchema: 'schema/bot-config.schema.json',
  gitignore: '.gitignore',
} as const;

/** The party alias the example rule acts as; a config without it fails `validate`. */
export const EXAMPLE_ACTING_ALIAS = 'approver';

/** The aliases the embedded sandbox allocates: the example's two sides. */
export const EMBEDDED_ALIASES = ['employee', 'approver'] as const;

/** The state directory (the config's `state.dir`), kept out of git. */
export const STATE_DIR = '.state';

/** The line .gitignore needs; `init` appends it to an existing .gitignore that lacks it. */
export const GITIGNORE_ENTRY = `${STATE_DIR}/`;

export function gitignoreText(): string {
  return [
    '# The bot state (checkpoint, intent journal, dead letters): local to each running bot.',
    GITIGNORE_ENTRY,
    'node_modules/',
    '',
  ].join('\n');
}

// The schema line points at a copy of the schema inside the project (schema/rules.schema.json,
// written by init): a relative path is what the YAML extension resolves, and a copy works
// however ledgerbot was installed (a dependency, globally, or only through npx, where no
// node_modules/ledgerbot exists in the project).
export function exampleRuleText(): string {
  return `# yaml-language-server: $schema=../${STARTER_PATHS.schema}
# The line above lets an editor (VS Code with Red Hat's YAML extension) complete field names,
# explain them and underline mistakes. It points at a copy of ledgerbot's rule schema that
# \`ledgerbot init\` wrote into this project. If ledgerbot is a dependency of the project
# (npm install ledgerbot), you may point at ../node_modules/ledgerbot/schema/rules.schema.json
# instead, which stays current when you upgrade.
#
# An example rule: the approver approves small expense claims automatically.
# Read it as: when a Claim contract is created and the approver can see it, and the claim is
# addressed to our approver and is 100 or less, the approver exercises the Approve choice on it.
# The guide to every field: docs/rules.md in the ledgerbot package.
# Check this file with \`ledgerbot validate --config bot.config.yaml\`; its tests are in
# ../tests/ (\`ledgerbot test tests\`).
version: 1
rules:
  # The id is part of every command id the rule submits: keep it stable once the bot runs.
  - id: approve-small-claims
    description: The approver approves expense claims of 100 or less
    on:
      # A template reference: '#package-name:Module:Template'. Quote it: YAML reads an
      # unquoted # as the start of a comment. The embedded sandbox's models/starter.yaml
      # defines this one; on a participant, name a template of your own Daml package.
      created: '#starter:Expenses:Claim'
      # Whose view of the ledger the rule reads: a party alias from bot.config.yaml.
      party: ${EXAMPLE_ACTING_ALIAS}
    # Conditions (CEL expressions); the rule fires when all are true. \`event\` is the ledger
    # event, \`parties.${EXAMPLE_ACTING_ALIAS}\` the party id of the alias. Amounts are text on the ledger,
    # so compare them with decimal(...).
    when:
      - event.createArgument.approver == parties.${EXAMPLE_ACTING_ALIAS}
      - decimal(event.createArgument.amount) <= decimal("100")
    # The commands to submit. \${{ ... }} puts the value of an expression into a command.
    # ledgerbot submits each one exactly once, even across restarts and retries.
    then:
      - exercise:
          template: '#starter:Expenses:Claim'
          contractId: '\${{ event.contractId }}'
          choice: Approve
        actAs: [${EXAMPLE_ACTING_ALIAS}]
`;
}

export function exampleTestText(): string {
  return `# yaml-language-server: $schema=../${STARTER_PATHS.testSchema}
# Unit tests for rules/approve-small-claims.yaml, run with \`ledgerbot test tests\`.
# Each test gives the rules some ledger events and says which commands the bot should submit
# (or none). No ledger is needed. The guide: "Testing rules" in docs/rules.md.
rules: ../rules # the rule files or folders to load, relative to this file
parties: # alias: party id, as the ledger would give them (any ids will do in a test)
  employee: &employee Employee::1220aaaa
  approver: &approver Approver::1220bbbb

tests:
  - name: a small claim is approved
    given:
      - created:
          template: '#starter:Expenses:Claim'
          contractId: 00claim1
          createArgument:
            employee: *employee
            approver: *approver
            amount: '42.50'
            currency: CHF
            description: Train ticket
    expect:
      - rule: approve-small-claims
        exercise:
          template: '#starter:Expenses:Claim'
          contractId: 00claim1
          choice: Approve
        actAs: [approver]

  - name: a claim over 100 is left for a person
    given:
      - created:
          template: '#starter:Expenses:Claim'
          createArgument:
            employee: *employee
            approver: *approver
            amount: '100.01'
            currency: CHF
            description: Team dinner
    expect: [] # no commands

  - name: a claim addressed to another approver is ignored
    given:
      - created:
          template: '#starter:Expenses:Claim'
          createArgument:
            employee: *employee
            approver: Someone::1220cccc
            amount: '10.00'
            currency: CHF
            description: Coffee
    expect: []
`;
}

// The model is "a small Daml in YAML" for the embedded sandbox, so the example rule has a
// template to fire on without a Canton install or a DAR.
export function starterModelText(): string {
  return `# The starter ledger for the embedded sandbox: templates and choices described in YAML, as a
# small Daml (the guide: docs/sandbox-models.md in the ledgerbot package). A real participant
# runs your Daml packages instead; the rules then name their templates.
package:
  name: starter # rules refer to its templates as '#starter:Module:Template'
  version: 1.0.0

templates:
  Expenses:Claim:
    fields:
      employee: Party
      approver: Party
      amount: Numeric 2
      currency: Text
      description: Text
    signatories: [employee]
    observers: [approver]
    ensure: 'decimal(this.amount) > 0'
    choices:
      Approve:
        controllers: [approver]
        body:
          - create: Expenses:ApprovedClaim
            as: approved
            with:
              employee: this.employee
              approver: this.approver
              amount: this.amount
              currency: this.currency
              description: this.description
        result: approved
        returns: ContractId Expenses:ApprovedClaim
      Reject:
        controllers: [approver]

  Expenses:ApprovedClaim:
    fields:
      employee: Party
      approver: Party
      amount: Numeric 2
      currency: Text
      description: Text
    signatories: [employee, approver]
`;
}
