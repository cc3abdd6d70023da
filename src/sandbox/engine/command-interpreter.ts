import { CelDecimal } from '../../rules/cel/cel-decimal.js';
import { CelEvaluationError } from '../../rules/cel/cel-evaluation-error.js';
import type { Command, JsCommands } from '../../ledger/wire/wire-types.js';
import type {
  ChoiceDef,
  DamlType,
  ModelExpr,
  PartiesExpr,
  TemplateDef,
  ValueExpr,
} from '../model/model-types.js';
import { canonicalText, normalizeDamlValue } from '../model/normalize-daml-value.js';
import type { ContractRecord, CreateNode, ExerciseNode, TxNode } from './committed-transaction.js';
import { engineError, type EngineError } from './engine-error.js';
import type { ResolvedId } from './template-resolver.js';

/** What the interpreter needs from the ledger; reads only (the commit happens elsewhere). */
export interface InterpreterLedger {
  resolveTemplate(templateId: string): ResolvedId | EngineError;
  isKnownParty(party: string): boolean;
  /** The active contract, or undefined when unknown or archived. */
  activeContract(contractId: string): ContractRecord | undefined;
  /** The active contract with this key, or undefined. */
  activeContractByKey(template: TemplateDef, keyText: string): string | undefined;
  nextContractId(): string;
}

export type Interpreted = {
  readonly nodes: readonly TxNode[];
  readonly created: readonly ContractRecord[];
  /** Contracts that were active before this transaction and are archived by it. */
  readonly archived: readonly ContractRecord[];
};

/** Thrown inside the interpreter only; turned into an EngineError result at the boundary. */
class Abort extends Error {
  constructor(readonly error: EngineError) {
    super(error.cause);
  }
}

const fail = (error: EngineError): never => {
  throw new Abort(error);
};

function sortedUnique(parties: Iterable<string>): string[] {
  return [...new Set(parties)].sort();
}

/** CEL values to plain Daml-LF JSON, for results without a declared type. */
function celToJson(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof CelDecimal) return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(celToJson);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of value as Map<unknown, unknown>) out[String(k)] = celToJson(v);
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = celToJson(v);
    return out;
  }
  return value;
}

type Scope = Record<string, unknown>;

/**
 * Interprets one JsCommands submission against a read-only ledger view, producing the LEDGER_EFFECTS
 * tree. Daml's rules, in small: top-level authorizers are actAs; inside a choice they are the
 * controllers plus the contract's signatories. Creates need every signatory authorized, exercises
 * every controller, fetches at least one stakeholder. Contracts must be active and visible to an
 * actAs or readAs party (a stakeholder), unless created earlier in the same transaction.
 */
export class CommandInterpreter {
  readonly #ledger: InterpreterLedger;
  readonly #readers: ReadonlySet<string>;
  readonly #createdAt: string;
  readonly #offset: number;
  readonly #nodes: TxNode[] = [];
  readonly #local = new Map<string, ContractRecord>();
  readonly #localArchived = new Set<string>();
  readonly #localKeys = new Map<string, string>();
  readonly #archivedBefore: ContractRecord[] = [];

  private constructor(
    ledger: InterpreterLedger,
    readers: ReadonlySet<string>,
    createdAt: string,
    offset: number,
  ) {
    this.#ledger = ledger;
    this.#readers = readers;
    this.#createdAt = createdAt;
    this.#offset = offset;
  }

  static run(
    ledger: InterpreterLedger,
    commands: JsCommands,
    createdAt: string,
    /** The offset the transaction will get if it commits. */
    offset: number,
  ): { ok: true; value: Interpreted } | { ok: false; error: EngineError } {
    const actAs = commands.actAs ?? [];
    if (actAs.length === 0) {
      return {
        ok: false,
        error: engineError(
          'MISSING_FIELD',
          8,
          'The submitted command is missing a mandatory field: act_as',
          { context: { field_name: 'act_as' } },
        ),
      };
    }
    if (commands.commands.length === 0) {
      return {
        ok: false,
        error: engineError(
          'MISSING_FIELD',
          8,
          'The submitted command is missing a mandatory field: commands',
          { context: { field_name: 'commands' } },
        ),
      };
    }
    for (const party of [...actAs, ...(commands.readAs ?? [])]) {
      if (!ledger.isKnownParty(party)) {
        return {
          ok: false,
          error: engineError(
            'PARTY_NOT_KNOWN_ON_LEDGER',
            11,
            `Party not known on ledger: ${party} is not allocated on this participant`,
            {
              resources: [['PARTY', party]],
            },
          ),
        };
      }
    }
    const interpreter = new CommandInterpreter(
      ledger,
      new Set([...actAs, ...(commands.readAs ?? [])]),
      createdAt,
      offset,
    );
    try {
      const authorizers = new Set(actAs);
      for (const command of commands.commands) interpreter.#command(command, authorizers);
      return { ok: true, value: interpreter.#finish() };
    } catch (error) {
      if (error instanceof Abort) return { ok: false, error: error.error };
      throw error;
    }
  }

  #finish(): Interpreted {
    // A create is in the ACS delta unless the same transaction archived it again.
    const nodes = this.#nodes.map((n) =>
      n.kind === 'create' && this.#localArchived.has(n.contract.contractId)
        ? { ...n, acsDelta: false }
        : n,
    );
    return {
      nodes,
      created: [...this.#local.values()].filter((c) => !this.#localArchived.has(c.contractId)),
      archived: this.#archivedBefore,
    };
  }

  #command(command: Command, authorizers: ReadonlySet<string>): void {
    if ('CreateCommand' in command) {
      const c = command.CreateCommand;
      const template = this.#template(c.templateId);
      this.#create(
        template,
        this.#commandArgument(template, c.createArguments),
        authorizers,
        new Set(),
      );
    } else if ('ExerciseCommand' in command) {
      const c = command.ExerciseCommand;
      const resolved = this.#resolve(c.templateId);
      const contract = this.#fetchVisible(c.contractId, resolved);
      this.#exerciseCommand(contract, resolved, c.choice, c.choiceArgument, authorizers);
    } else if ('CreateAndExerciseCommand' in command) {
      const c = command.CreateAndExerciseCommand;
      const template = this.#template(c.templateId);
      const cid = this.#create(
        template,
        this.#commandArgument(template, c.createArguments),
        authorizers,
        new Set(),
      );
      const contract = this.#local.get(cid)!;
      this.#exerciseCommand(
        contract,
        { kind: 'template', template },
        c.choice,
        c.choiceArgument,
        authorizers,
      );
    } else if ('ExerciseByKeyCommand' in command) {
      const c = command.ExerciseByKeyCommand;
      const template = this.#template(c.templateId);
      if (template.key === null) {
        fail(
          engineError(
            'COMMAND_PREPROCESSING_FAILED',
            8,
            `Template ${template.templateId} does not have a key`,
            { resources: [['TEMPLATE_ID', template.templateId]] },
          ),
        );
        return;
      }
      const key = normalizeDamlValue(template.key.type, c.contractKey, 'contractKey', {
        round: false,
      });
      if (!key.ok) {
        fail(engineError(key.problem.code, 8, key.problem.message));
        return;
      }
      const keyText = canonicalText(key.value);
      const cid = this.#lookupKey(template, keyText);
      if (cid === undefined) {
        fail(
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
        return;
      }
      const contract = this.#fetchVisible(cid, { kind: 'template', template });
      this.#exerciseCommand(
        contract,
        { kind: 'template', template },
        c.choice,
        c.choiceArgument,
        authorizers,
      );
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

  #resolve(templateId: string): ResolvedId {
    const resolved = this.#ledger.resolveTemplate(templateId);
    if ('code' in resolved) return fail(resolved);
    return resolved;
  }

  #template(templateId: string): TemplateDef {
    const resolved = this.#resolve(templateId);
    if (resolved.kind !== 'template') {
      return fail(
        engineError(
          'INVALID_ARGUMENT',
          8,
          `The submitted request has invalid arguments: ${templateId} is an interface, not a template`,
        ),
      );
    }
    return resolved.template;
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
    const choice = contract.template.choices.get(choiceName);
    if (choice === undefined) {
      fail(
        engineError(
          'COMMAND_PREPROCESSING_FAILED',
          8,
          `Couldn't find requested choice ${choiceName} for template ${contract.template.templateId}. This choice could be added in a newer version of the template.`,
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
    this.#exercise(
      contract,
      choice,
      arg.value as Record<string, unknown>,
      authorizers,
      new Set(),
      interfaceId,
    );
  }

  // ---- contracts ---------------------------------------------------------------------------------

  #lookup(contractId: string): ContractRecord | undefined {
    if (this.#localArchived.has(contractId)) return undefined;
    return this.#local.get(contractId) ?? this.#ledger.activeContract(contractId);
  }

  #lookupKey(template: TemplateDef, keyText: string): string | undefined {
    const indexKey = `${template.templateId}\u0000${keyText}`;
    const local = this.#localKeys.get(indexKey);
    if (local !== undefined) return this.#localArchived.has(local) ? undefined : local;
    const global = this.#ledger.activeContractByKey(template, keyText);
    return global === undefined || this.#localArchived.has(global) ? undefined : global;
  }

  /** Active, visible to the submitters, and of the expected template (or implementing the interface). */
  #fetchVisible(contractId: string, expected: ResolvedId): ContractRecord {
    const contract = this.#lookup(contractId);
    const visible =
      contract !== undefined &&
      (this.#local.has(contractId) || contract.stakeholders.some((p) => this.#readers.has(p)));
    if (contract === undefined || !visible) {
      return fail(
        engineError('CONTRACT_NOT_FOUND', 11, `Contract could not be found with id ${contractId}`, {
          resources: [['CONTRACT_ID', contractId]],
        }),
      );
    }
    const ok =
      expected.kind === 'template'
        ? contract.template.templateId === expected.template.templateId ||
          (contract.template.packageName === expected.template.packageName &&
            contract.template.qualifiedName === expected.template.qualifiedName)
        : contract.template.implements.has(expected.iface.qualifiedName) &&
          contract.template.packageName === expected.iface.packageName;
    if (!ok) {
      const wanted =
        expected.kind === 'template' ? expected.template.templateId : expected.iface.interfaceId;
      return fail(
        engineError(
          'WRONGLY_TYPED_CONTRACT',
          9,
          `Interpretation error: Error: contract ${contractId} (${contract.template.templateId}) not of type ${wanted}`,
          {
            resources: [
              ['CONTRACT_ID', contractId],
              ['TEMPLATE_ID', wanted],
            ],
          },
        ),
      );
    }
    return contract;
  }

  // ---- evaluation --------------------------------------------------------------------------------

  #eval(expr: ModelExpr, scope: Scope): unknown {
    try {
      return expr.program.evaluate(scope);
    } catch (error) {
      if (error instanceof CelEvaluationError) {
        return fail(
          engineError(
            'DAML_INTERPRETATION_ERROR',
            9,
            `Interpretation error: Error: ${error.summary} in "${expr.source}" (${expr.pos.file}:${expr.pos.line}:${expr.pos.col})`,
          ),
        );
      }
      throw error;
    }
  }

  #evalValue(value: ValueExpr, scope: Scope): unknown {
    if (value.kind === 'cel') return this.#eval(value.expr, scope);
    const out: Record<string, unknown> = {};
    for (const [k, v] of value.fields) out[k] = this.#evalValue(v, scope);
    return out;
  }

  #typed(type: DamlType, value: unknown, what: string): unknown {
    const r = normalizeDamlValue(type, value, '', { round: true });
    if (!r.ok)
      return fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: ${what}: ${r.problem.message}`,
        ),
      );
    return r.value;
  }

  #parties(
    exprs: readonly PartiesExpr[],
    argument: Readonly<Record<string, unknown>>,
    scope: Scope,
    what: string,
  ): string[] {
    const out: string[] = [];
    const add = (v: unknown): void => {
      if (v === null || v === undefined) return;
      if (typeof v === 'string' && v !== '') out.push(v);
      else if (Array.isArray(v)) v.forEach(add);
      else
        fail(
          engineError(
            'DAML_INTERPRETATION_ERROR',
            9,
            `Interpretation error: Error: ${what} must be parties, got ${JSON.stringify(celToJson(v))}`,
          ),
        );
    };
    for (const e of exprs) {
      add(
        e.kind === 'field'
          ? (argument[e.field] ?? (scope.arg as Record<string, unknown> | undefined)?.[e.field])
          : this.#eval(e.expr, scope),
      );
    }
    return sortedUnique(out);
  }

  // ---- nodes -------------------------------------------------------------------------------------

  #create(
    template: TemplateDef,
    argument: Record<string, unknown>,
    authorizers: ReadonlySet<string>,
    ancestors: ReadonlySet<string>,
  ): string {
    const scope: Scope = { this: argument };
    const signatories = this.#parties(template.signatories, argument, scope, 'signatories');
    const observers = this.#parties(template.observers, argument, scope, 'observers');
    if (signatories.length === 0) {
      fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: a contract of ${template.templateId} must have at least one signatory`,
        ),
      );
    }
    if (template.ensure !== null && this.#eval(template.ensure, scope) !== true) {
      fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: template precondition violated: ${template.qualifiedName} (ensure ${template.ensure.source})`,
        ),
      );
    }
    const missing = signatories.filter((p) => !authorizers.has(p));
    if (missing.length > 0) {
      fail(
        engineError(
          'DAML_AUTHORIZATION_ERROR',
          8,
          `Interpretation error: Error: node NodeId(${this.#nodes.length}) (${template.templateId}) requires authorizers ${signatories.join(',')}, but only ${[...authorizers].sort().join(',')} were given`,
        ),
      );
    }
    let key: unknown = null;
    let keyText: string | null = null;
    let maintainers: string[] = [];
    if (template.key !== null) {
      key = this.#typed(
        template.key.type,
        this.#evalValue(template.key.value, scope),
        `key of ${template.qualifiedName}`,
      );
      keyText = canonicalText(key);
      maintainers = this.#parties(template.key.maintainers, argument, scope, 'key maintainers');
      if (maintainers.some((m) => !signatories.includes(m))) {
        fail(
          engineError(
            'DAML_INTERPRETATION_ERROR',
            9,
            `Interpretation error: Error: key maintainers of ${template.qualifiedName} must be signatories`,
          ),
        );
      }
      if (this.#lookupKey(template, keyText) !== undefined) {
        fail(
          engineError(
            'DUPLICATE_CONTRACT_KEY',
            10,
            `DuplicateKey: contract key is not unique: ${keyText}`,
            {
              resources: [
                ['TEMPLATE_ID', template.templateId],
                ['CONTRACT_KEY', keyText],
              ],
            },
          ),
        );
      }
    }
    const contractId = this.#ledger.nextContractId();
    const nodeId = this.#nodes.length;
    const stakeholders = sortedUnique([...signatories, ...observers]);
    const record: ContractRecord = {
      contractId,
      template,
      argument,
      signatories,
      observers: observers.filter((o) => !signatories.includes(o)),
      stakeholders,
      key,
      keyText,
      maintainers,
      createdAt: this.#createdAt,
      createdOffset: this.#offset,
      createdNodeId: nodeId,
    };
    const node: CreateNode = {
      kind: 'create',
      nodeId,
      contract: record,
      informees: stakeholders,
      witnesses: sortedUnique([...stakeholders, ...ancestors]),
      acsDelta: true,
    };
    this.#nodes.push(node);
    this.#local.set(contractId, record);
    if (keyText !== null) this.#localKeys.set(`${template.templateId}\u0000${keyText}`, contractId);
    return contractId;
  }

  #exercise(
    contract: ContractRecord,
    choice: ChoiceDef,
    arg: Record<string, unknown>,
    authorizers: ReadonlySet<string>,
    ancestors: ReadonlySet<string>,
    interfaceId: string | null,
  ): unknown {
    const scope: Scope = { this: contract.argument, arg, self: contract.contractId };
    const controllers = this.#parties(choice.controllers, contract.argument, scope, 'controllers');
    const choiceObservers = this.#parties(
      choice.observers,
      contract.argument,
      scope,
      'choice observers',
    );
    if (controllers.length === 0) {
      fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: choice ${choice.name} has no controllers`,
        ),
      );
    }
    const missing = controllers.filter((p) => !authorizers.has(p));
    if (missing.length > 0) {
      fail(
        engineError(
          'DAML_AUTHORIZATION_ERROR',
          8,
          `Interpretation error: Error: node NodeId(${this.#nodes.length}) (${contract.template.templateId}) requires authorizers ${controllers.join(',')}, but only ${[...authorizers].sort().join(',')} were given`,
        ),
      );
    }
    const informees = sortedUnique([
      ...(choice.consuming ? contract.stakeholders : contract.signatories),
      ...controllers,
      ...choiceObservers,
    ]);
    const witnesses = sortedUnique([...informees, ...ancestors]);
    const nodeId = this.#nodes.length;
    // Reserve the slot: children come after their parent in pre-order.
    this.#nodes.push(undefined as unknown as TxNode);
    const wasActiveBefore = !this.#local.has(contract.contractId);
    if (choice.consuming) {
      this.#localArchived.add(contract.contractId);
      if (wasActiveBefore) this.#archivedBefore.push(contract);
    }
    const inner = new Set([...controllers, ...contract.signatories]);
    const innerAncestors = new Set(witnesses);
    for (const step of choice.body) {
      switch (step.kind) {
        case 'assert':
          if (this.#eval(step.condition, scope) !== true) {
            fail(
              engineError(
                'DAML_INTERPRETATION_ERROR',
                9,
                `Interpretation error: Error: User abort: ${step.message}`,
              ),
            );
          }
          break;
        case 'create': {
          const template = this.#sibling(contract.template, step.template);
          const argument = this.#typed(
            { kind: 'Record', fields: template.fields },
            this.#evalValue(step.argument, scope),
            `create of ${step.template}`,
          );
          const cid = this.#create(
            template,
            argument as Record<string, unknown>,
            inner,
            innerAncestors,
          );
          if (step.name !== null) scope[step.name] = cid;
          break;
        }
        case 'fetch': {
          const cid = this.#eval(step.contractId, scope);
          const template = this.#sibling(contract.template, step.template);
          const fetched = this.#fetchVisible(String(cid), { kind: 'template', template });
          if (!fetched.stakeholders.some((p) => inner.has(p))) {
            fail(
              engineError(
                'DAML_AUTHORIZATION_ERROR',
                8,
                `Interpretation error: Error: fetch of ${fetched.contractId} requires one of its stakeholders ${fetched.stakeholders.join(',')} as authorizer`,
              ),
            );
          }
          if (step.name !== null) scope[step.name] = fetched.argument;
          break;
        }
        case 'exercise': {
          const cid = this.#eval(step.contractId, scope);
          const template = this.#sibling(contract.template, step.template);
          const target = this.#fetchVisible(String(cid), { kind: 'template', template });
          const targetChoice = target.template.choices.get(step.choice)!;
          const targetArg = this.#typed(
            { kind: 'Record', fields: targetChoice.argument },
            this.#evalValue(step.argument, scope),
            `argument of ${step.choice}`,
          );
          const result = this.#exercise(
            target,
            targetChoice,
            targetArg as Record<string, unknown>,
            inner,
            innerAncestors,
            null,
          );
          if (step.name !== null) scope[step.name] = result;
          break;
        }
      }
    }
    let result: unknown = {};
    if (choice.result !== null) {
      const value = this.#evalValue(choice.result, scope);
      result =
        choice.returns === null
          ? celToJson(value)
          : this.#typed(choice.returns, value, `result of ${choice.name}`);
    }
    const node: ExerciseNode = {
      kind: 'exercise',
      nodeId,
      contract,
      informees,
      witnesses,
      acsDelta: choice.consuming && wasActiveBefore,
      choice: choice.name,
      interfaceId,
      choiceArgument: arg,
      actingParties: controllers,
      consuming: choice.consuming,
      lastDescendantNodeId: this.#nodes.length - 1,
      exerciseResult: result,
    };
    this.#nodes[nodeId] = node;
    return result;
  }

  /** Steps name templates of the same package by `Module:Entity`. */
  #sibling(of: TemplateDef, qualifiedName: string): TemplateDef {
    const resolved = this.#resolve(`${of.packageId}:${qualifiedName}`);
    if (resolved.kind !== 'template')
      return fail(
        engineError('DAML_INTERPRETATION_ERROR', 9, `${qualifiedName} is not a template`),
      );
    return resolved.template;
  }
}
