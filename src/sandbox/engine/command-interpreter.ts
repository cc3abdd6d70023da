import type { Command, JsCommands } from '../../ledger/wire/wire-types.js';
import { interfaceInstance } from '../model/interface-instance.js';
import type { TemplateDef } from '../model/model-types.js';
import { canonicalText, normalizeDamlValue } from '../model/normalize-daml-value.js';
import type { ContractRecord, TxNode } from './committed-transaction.js';
import { engineError, type EngineError } from './engine-error.js';
import { fail, InterpreterAbort } from './interpreter-abort.js';
import { NodeBuilder } from './node-builder.js';
import type { ResolvedId } from './template-resolver.js';
import { TransactionView, type InterpreterLedger } from './transaction-view.js';

export type { InterpreterLedger } from './transaction-view.js';

export type Interpreted = {
  readonly nodes: readonly TxNode[];
  readonly created: readonly ContractRecord[];
  /** Contracts that were active before this transaction and are archived by it. */
  readonly archived: readonly ContractRecord[];
};

/**
 * Interprets one JsCommands submission against a read-only ledger view, producing the LEDGER_EFFECTS
 * tree. Daml's rules, in small: top-level authorizers are actAs; inside a choice they are the
 * controllers plus the contract's signatories. Creates need every signatory authorized, exercises
 * every controller, fetches at least one stakeholder. Contracts must be active and visible to an
 * actAs or readAs party (a stakeholder), unless created earlier in the same transaction.
 *
 * This class reads the submission's commands; `TransactionView` answers lookups and
 * `NodeBuilder` makes the nodes.
 */
export class CommandInterpreter {
  readonly #view: TransactionView;
  readonly #builder: NodeBuilder;

  private constructor(view: TransactionView, builder: NodeBuilder) {
    this.#view = view;
    this.#builder = builder;
  }

  static run(
    ledger: InterpreterLedger,
    commands: JsCommands,
    createdAt: string,
    /** The offset the transaction will get if it commits. */
    offset: number,
  ): { ok: true; value: Interpreted } | { ok: false; error: EngineError } {
    const refused = checkSubmitters(ledger, commands);
    if (refused !== undefined) return { ok: false, error: refused };
    const actAs = commands.actAs ?? [];
    const view = new TransactionView(ledger, new Set([...actAs, ...(commands.readAs ?? [])]));
    const interpreter = new CommandInterpreter(view, new NodeBuilder(view, createdAt, offset));
    try {
      const authorizers = new Set(actAs);
      for (const command of commands.commands) interpreter.#command(command, authorizers);
      return {
        ok: true,
        value: {
          nodes: interpreter.#builder.nodes(),
          created: view.created(),
          archived: view.archivedBefore(),
        },
      };
    } catch (error) {
      if (error instanceof InterpreterAbort) return { ok: false, error: error.error };
      throw error;
    }
  }

  #command(command: Command, authorizers: ReadonlySet<string>): void {
    if ('CreateCommand' in command) {
      this.#createCommand(command.CreateCommand, authorizers);
    } else if ('ExerciseCommand' in command) {
      const c = command.ExerciseCommand;
      const resolved = this.#view.resolve(c.templateId);
      const contract = this.#view.fetchVisible(c.contractId, resolved);
      this.#exerciseCommand(contract, resolved, c.choice, c.choiceArgument, authorizers);
    } else if ('CreateAndExerciseCommand' in command) {
      const c = command.CreateAndExerciseCommand;
      const { template, contractId } = this.#createCommand(c, authorizers);
      const contract = this.#view.createdHere(contractId)!;
      const via: ResolvedId = { kind: 'template', template };
      this.#exerciseCommand(contract, via, c.choice, c.choiceArgument, authorizers);
    } else if ('ExerciseByKeyCommand' in command) {
      const c = command.ExerciseByKeyCommand;
      const template = this.#view.template(c.templateId);
      const via: ResolvedId = { kind: 'template', template };
      const contract = this.#view.fetchVisible(this.#byKey(template, c.contractKey), via);
      this.#exerciseCommand(contract, via, c.choice, c.choiceArgument, authorizers);
    } else {
      fail(
        engineError(
          'INVALID_ARGUMENT',
          8,
          'The submitted request has invalid arguments: unsupported command kind',
        ),
      );
    }
  }

  /** The id of the active contract with this key. */
  #byKey(template: TemplateDef, contractKey: unknown): string {
    if (template.key === null) {
      return fail(
        engineError(
          'COMMAND_PREPROCESSING_FAILED',
          8,
          template.behaviour === 'none'
            ? `Template ${template.templateId} does not have a key the sandbox evaluates: no model describes it (docs/sandbox.md, "DAR templates")`
            : `Template ${template.templateId} does not have a key`,
          { resources: [['TEMPLATE_ID', template.templateId]] },
        ),
      );
    }
    const key = normalizeDamlValue(template.key.type, contractKey, 'contractKey', {
      round: false,
    });
    if (!key.ok) return fail(engineError(key.problem.code, 8, key.problem.message));
    const keyText = canonicalText(key.value);
    const cid = this.#view.lookupKey(template, keyText);
    if (cid === undefined) {
      return fail(
        engineError(
          'CONTRACT_KEY_NOT_FOUND',
          11,
          `dependency error: couldn't find key: ${keyText}`,
          {
            resources: [
              ['TEMPLATE_ID', template.templateId],
              ['CONTRACT_KEY', keyText],
            ],
          },
        ),
      );
    }
    return cid;
  }

  /** The create of a CreateCommand or CreateAndExerciseCommand. */
  #createCommand(
    c: { readonly templateId: string; readonly createArguments: unknown },
    authorizers: ReadonlySet<string>,
  ): { template: TemplateDef; contractId: string } {
    const template = this.#view.template(c.templateId);
    const argument = this.#commandArgument(template, c.createArguments);
    return {
      template,
      contractId: this.#builder.create(template, argument, authorizers, new Set()),
    };
  }

  #commandArgument(template: TemplateDef, value: unknown): Record<string, unknown> {
    const r = normalizeDamlValue({ kind: 'Record', fields: template.fields }, value, '', {
      round: false,
    });
    if (!r.ok) return fail(engineError(r.problem.code, 8, r.problem.message));
    return r.value as Record<string, unknown>;
  }

  #exerciseCommand(
    contract: ContractRecord,
    via: ResolvedId,
    choiceName: string,
    argument: unknown,
    authorizers: ReadonlySet<string>,
  ): void {
    // Through an interface, the interface's choice (as this template implements it); else only
    // the template's own choices, as in Daml.
    const choice =
      via.kind === 'interface'
        ? interfaceInstance(contract.template, via.iface, true)?.choices.get(choiceName)
        : contract.template.choices.get(choiceName);
    if (choice === undefined) {
      fail(
        engineError(
          'COMMAND_PREPROCESSING_FAILED',
          8,
          via.kind === 'interface'
            ? `unknown choice ${choiceName} in interface ${via.iface.interfaceId}`
            : `Couldn't find requested choice ${choiceName} for template ${contract.template.templateId}. This choice could be added in a newer version of the template.`,
        ),
      );
      return;
    }
    const arg = normalizeDamlValue(
      { kind: 'Record', fields: choice.argument },
      argument ?? {},
      'choiceArgument',
      { round: false },
    );
    if (!arg.ok) {
      fail(engineError(arg.problem.code, 8, arg.problem.message));
      return;
    }
    const interfaceId = via.kind === 'interface' ? via.iface.interfaceId : null;
    this.#builder.exercise(
      contract,
      choice,
      arg.value as Record<string, unknown>,
      authorizers,
      new Set(),
      interfaceId,
    );
  }
}

/** What Canton checks before interpreting: actAs and commands present, every party known. */
function checkSubmitters(ledger: InterpreterLedger, commands: JsCommands): EngineError | undefined {
  const actAs = commands.actAs ?? [];
  if (actAs.length === 0) {
    return engineError(
      'MISSING_FIELD',
      8,
      'The submitted command is missing a mandatory field: act_as',
      {
        context: { field_name: 'act_as' },
      },
    );
  }
  if (commands.commands.length === 0) {
    return engineError(
      'MISSING_FIELD',
      8,
      'The submitted command is missing a mandatory field: commands',
      { context: { field_name: 'commands' } },
    );
  }
  for (const party of [...actAs, ...(commands.readAs ?? [])]) {
    if (!ledger.isKnownParty(party)) {
      return engineError(
        'PARTY_NOT_KNOWN_ON_LEDGER',
        11,
        `Party not known on ledger: ${party} is not allocated on this participant`,
        { resources: [['PARTY', party]] },
      );
    }
  }
  return undefined;
}
