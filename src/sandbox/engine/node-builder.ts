import type {
  ChoiceDef,
  FieldDef,
  ModelExpr,
  TemplateDef,
  ValueExpr,
} from '../model/model-types.js';
import { canonicalText } from '../model/normalize-daml-value.js';
import { recordType } from '../model/record-type.js';
import { argumentParties } from './argument-parties.js';
import type { ContractRecord, CreateNode, ExerciseNode, TxNode } from './committed-transaction.js';
import { engineError } from './engine-error.js';
import { fail } from './interpreter-abort.js';
import {
  celToJson,
  evalExpr,
  evalValue,
  partiesOf,
  sortedUnique,
  typed,
  type Scope,
} from './model-evaluation.js';
import type { TransactionView } from './transaction-view.js';

/**
 * Builds the LEDGER_EFFECTS tree of one transaction, node by node in pre-order: a create checks
 * its signatories' authorization, ensure clause and key; an exercise its controllers, then runs
 * the choice body's steps (assert, create, fetch, exercise) under the controllers' and the
 * contract's signatories' authority. Daml's rules, in small.
 */
export class NodeBuilder {
  readonly #view: TransactionView;
  readonly #createdAt: string;
  readonly #offset: number;
  readonly #nodes: TxNode[] = [];

  /** `offset`: the one the transaction will get if it commits. */
  constructor(view: TransactionView, createdAt: string, offset: number) {
    this.#view = view;
    this.#createdAt = createdAt;
    this.#offset = offset;
  }

  /** The nodes; a create is in the ACS delta unless the same transaction archived it again. */
  nodes(): TxNode[] {
    return this.#nodes.map((n) =>
      n.kind === 'create' && this.#view.archivedHere(n.contract.contractId)
        ? { ...n, acsDelta: false }
        : n,
    );
  }

  /** Creates a contract; returns its id. */
  create(
    template: TemplateDef,
    argument: Record<string, unknown>,
    authorizers: ReadonlySet<string>,
    ancestors: ReadonlySet<string>,
  ): string {
    const scope: Scope = { this: argument };
    const { signatories, observers } =
      template.behaviour === 'none'
        ? this.#argumentStakeholders(template, argument, authorizers)
        : {
            signatories: partiesOf(template.signatories, argument, scope, 'signatories'),
            observers: partiesOf(template.observers, argument, scope, 'observers'),
          };
    if (signatories.length === 0) {
      fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: a contract of ${template.templateId} must have at least one signatory`,
        ),
      );
    }
    if (template.ensure !== null && evalExpr(template.ensure, scope) !== true) {
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
      key = typed(
        template.key.type,
        evalValue(template.key.value, scope),
        `key of ${template.qualifiedName}`,
      );
      keyText = canonicalText(key);
      maintainers = partiesOf(template.key.maintainers, argument, scope, 'key maintainers');
      if (maintainers.some((m) => !signatories.includes(m))) {
        fail(
          engineError(
            'DAML_INTERPRETATION_ERROR',
            9,
            `Interpretation error: Error: key maintainers of ${template.qualifiedName} must be signatories`,
          ),
        );
      }
      if (this.#view.lookupKey(template, keyText) !== undefined) {
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
    const contractId = this.#view.nextContractId();
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
    this.#view.create(record);
    return contractId;
  }

  /**
   * The stakeholders of a contract of a template without a model: the parties of its argument
   * that authorize the create are its signatories, the others its observers.
   */
  #argumentStakeholders(
    template: TemplateDef,
    argument: Record<string, unknown>,
    authorizers: ReadonlySet<string>,
  ): { signatories: string[]; observers: string[] } {
    const parties = sortedUnique(argumentParties(recordType(template.fields), argument));
    const signatories = parties.filter((p) => authorizers.has(p));
    if (signatories.length === 0) {
      fail(
        engineError(
          'DAML_AUTHORIZATION_ERROR',
          8,
          `Interpretation error: Error: node NodeId(${this.#nodes.length}) (${template.templateId}) has no model, so its signatories are the parties of its create argument that authorize it; none of [${parties.join(',')}] is among the authorizers ${[...authorizers].sort().join(',')}`,
        ),
      );
    }
    return { signatories, observers: parties.filter((p) => !authorizers.has(p)) };
  }

  /** Exercises a choice and its body; returns the choice's result. */
  exercise(
    contract: ContractRecord,
    choice: ChoiceDef,
    arg: Record<string, unknown>,
    authorizers: ReadonlySet<string>,
    ancestors: ReadonlySet<string>,
    interfaceId: string | null,
  ): unknown {
    if (!choice.implemented) {
      fail(
        engineError(
          'DAML_INTERPRETATION_ERROR',
          9,
          `Interpretation error: Error: the sandbox has no behaviour for choice ${choice.name} of ${contract.template.templateId}${interfaceId === null ? '' : ` (interface ${interfaceId})`}: it runs no Daml code; describe the template in a model (docs/sandbox-models.md) to give the choice one`,
        ),
      );
    }
    const scope: Scope = { this: contract.argument, arg, self: contract.contractId };
    const controllers = partiesOf(
      choice.controllers,
      contract.argument,
      scope,
      'controllers',
      contract.signatories,
    );
    const choiceObservers = partiesOf(
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
    const wasActiveBefore = this.#view.recordExercise(contract, choice.consuming);
    const inner = new Set([...controllers, ...contract.signatories]);
    this.#body(contract, choice, scope, inner, new Set(witnesses));
    let result: unknown = {};
    if (choice.result !== null) {
      const value = evalValue(choice.result, scope);
      result =
        choice.returns === null
          ? celToJson(value)
          : typed(choice.returns, value, `result of ${choice.name}`);
    }
    const node: ExerciseNode = {
      kind: 'exercise',
      nodeId,
      contract,
      informees,
      witnesses,
      acsDelta: choice.consuming && wasActiveBefore,
      choice: choice.name,
      choiceDef: choice,
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

  /**
   * The contract ids a fetch or exercise step names: one, or (`list`) each id of a list the
   * step's expression gives, in order; `resolve` looks one up (visible, active, of the step's
   * template of the same package) when the step reaches it, so an earlier exercise of the same
   * step that consumed it is seen.
   */
  #stepIds(
    contract: ContractRecord,
    step: { readonly template: string; readonly contractId: ModelExpr },
    scope: Scope,
  ): { list: boolean; ids: unknown[]; resolve: (cid: unknown) => ContractRecord } {
    const value = evalExpr(step.contractId, scope);
    const template = this.#view.sibling(contract.template, step.template);
    return {
      list: Array.isArray(value),
      ids: Array.isArray(value) ? value : [value],
      resolve: (cid) => this.#view.fetchVisible(String(cid), { kind: 'template', template }),
    };
  }

  /** The steps of a choice body, with `inner` authority; named results go into `scope`. */
  #body(
    contract: ContractRecord,
    choice: ChoiceDef,
    scope: Scope,
    inner: ReadonlySet<string>,
    innerAncestors: ReadonlySet<string>,
  ): void {
    for (const step of choice.body) {
      switch (step.kind) {
        case 'assert':
          if (evalExpr(step.condition, scope) !== true) {
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
          const template = this.#view.sibling(contract.template, step.template);
          const argument = recordArgument(
            template.fields,
            step.argument,
            scope,
            `create of ${step.template}`,
          );
          const cid = this.create(template, argument, inner, innerAncestors);
          if (step.name !== null) scope[step.name] = cid;
          break;
        }
        case 'fetch': {
          // `fetch:` giving a list fetches each contract; `as` is then the list of arguments.
          const { list, ids, resolve } = this.#stepIds(contract, step, scope);
          const contracts = ids.map(resolve);
          for (const fetched of contracts) {
            if (!fetched.stakeholders.some((p) => inner.has(p))) {
              fail(
                engineError(
                  'DAML_AUTHORIZATION_ERROR',
                  8,
                  `Interpretation error: Error: fetch of ${fetched.contractId} requires one of its stakeholders ${fetched.stakeholders.join(',')} as authorizer`,
                ),
              );
            }
          }
          if (step.name !== null) {
            scope[step.name] = list ? contracts.map((c) => c.argument) : contracts[0]!.argument;
          }
          break;
        }
        case 'exercise': {
          // `on:` giving a list exercises the choice on each, in order, with the same
          // argument; `as` is then the list of results.
          const { list, ids, resolve } = this.#stepIds(contract, step, scope);
          const results: unknown[] = [];
          for (const cid of ids) {
            const target = resolve(cid);
            const targetChoice = target.template.choices.get(step.choice)!;
            const targetArg = recordArgument(
              targetChoice.argument,
              step.argument,
              scope,
              `argument of ${step.choice}`,
            );
            results.push(
              this.exercise(target, targetChoice, targetArg, inner, innerAncestors, null),
            );
          }
          if (step.name !== null) scope[step.name] = list ? results : results[0];
          break;
        }
      }
    }
  }
}

/** A step's record argument (a create's, a choice's), evaluated and checked against `fields`. */
function recordArgument(
  fields: readonly FieldDef[],
  argument: ValueExpr,
  scope: Scope,
  what: string,
): Record<string, unknown> {
  const value = typed({ kind: 'Record', fields }, evalValue(argument, scope), what);
  return value as Record<string, unknown>;
}
