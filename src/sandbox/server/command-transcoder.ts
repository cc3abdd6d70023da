import type { LedgerEngine } from '../engine/ledger-engine.js';
import type { ResolvedId } from '../engine/template-resolver.js';
import { decodeWireValue, scalaSet, type WireValueFailure } from '../model/decode-wire-value.js';
import type { ChoiceDef, DamlType } from '../model/model-types.js';
import { recordType } from '../model/record-type.js';
import type { JsonObject } from './request-parsing.js';
import { fromEngineError, SandboxApiError } from './sandbox-api-error.js';

/**
 * The error for a value the JSON layer's transcoder refused (`Endpoints.handleError`). Raised by
 * the JSON layer itself, so never redacted; the 500 keeps code, category and cause. (Too deep a
 * value is the engine's preprocessing error, refused here only to bound the recursion.)
 */
export function wireValueError(failure: WireValueFailure): SandboxApiError {
  switch (failure.kind) {
    case 'missing-fields':
      return new SandboxApiError(
        'COMMAND_PREPROCESSING_FAILED',
        `Missing non-optional fields: ${scalaSet(failure.fields)}`,
        { jsonLayer: true },
      );
    case 'unexpected-fields':
      // Canton joins the names with `mkString`, i.e. with no separator.
      return new SandboxApiError(
        'INVALID_ARGUMENT',
        `The submitted request has invalid arguments: Unexpected fields: ${failure.fields.join('')}`,
        { jsonLayer: true },
      );
    case 'nesting':
      // The engine's preprocessor refuses it in Canton: an error of the ledger services.
      return new SandboxApiError('COMMAND_PREPROCESSING_FAILED', failure.message);
    case 'illegal-argument':
      return new SandboxApiError(
        'INVALID_ARGUMENT',
        `The submitted request has invalid arguments: ${failure.message}`,
        { jsonLayer: true },
      );
    case 'internal':
      return new SandboxApiError('LEDGER_API_INTERNAL_ERROR', failure.message, {
        jsonLayer: true,
        definiteAnswer: false,
        context: { throwableO: `Some(${failure.exception}: ${failure.message})` },
      });
  }
}

function decoded(type: DamlType, json: unknown): unknown {
  const r = decodeWireValue(type, json);
  if (!r.ok) throw wireValueError(r.failure);
  return r.value;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Turns a command's Daml values from their JSON into Daml-LF values as Canton's JSON layer does,
 * before the command reaches the command service (so before validation, rights, deduplication and
 * interpretation): resolves each template and choice and reads every value strictly
 * (decodeWireValue). Returns the commands with canonical values; throws the JSON layer's errors
 * (400/500) and the resolution errors of the package service (unknown template or choice).
 * Whatever it cannot type (a malformed command) is left for the interpreter to refuse.
 */
export class CommandTranscoder {
  readonly #engine: LedgerEngine;

  constructor(engine: LedgerEngine) {
    this.#engine = engine;
  }

  transcode(commands: readonly unknown[]): unknown[] {
    return commands.map((c) => this.#command(c));
  }

  #command(command: unknown): unknown {
    if (!isObject(command)) return command;
    const [kind] = Object.keys(command);
    const body = kind === undefined ? undefined : command[kind];
    if (kind === undefined || !isObject(body) || typeof body.templateId !== 'string') {
      return command;
    }
    const resolved = this.#resolve(body.templateId);
    const out: JsonObject = { ...body };
    switch (kind) {
      case 'CreateCommand': {
        if (resolved.kind !== 'template') return command;
        out.createArguments = decoded(
          recordType(resolved.template.fields),
          body.createArguments ?? null,
        );
        break;
      }
      case 'ExerciseCommand':
        this.#choiceArgument(resolved, body, out);
        break;
      case 'CreateAndExerciseCommand': {
        if (resolved.kind !== 'template') return command;
        out.createArguments = decoded(
          recordType(resolved.template.fields),
          body.createArguments ?? null,
        );
        this.#choiceArgument(resolved, body, out);
        break;
      }
      case 'ExerciseByKeyCommand': {
        if (resolved.kind !== 'template') return command;
        this.#choiceArgument(resolved, body, out);
        const key = resolved.template.key;
        if (key !== null) out.contractKey = decoded(key.type, body.contractKey ?? null);
        break;
      }
      default:
        return command;
    }
    return { [kind]: out };
  }

  #resolve(templateId: string): ResolvedId {
    const r = this.#engine.resolveTemplate(templateId);
    if ('code' in r) throw fromEngineError(r);
    return r;
  }

  /**
   * The choice argument, typed by the choice the command names: the template's own, or through
   * an interface id the interface's (Canton types it from the interface, whatever the contract).
   */
  #choiceArgument(via: ResolvedId, body: JsonObject, out: JsonObject): void {
    const name = typeof body.choice === 'string' ? body.choice : '';
    const choice: { readonly argument: ChoiceDef['argument'] } | undefined =
      via.kind === 'template' ? via.template.choices.get(name) : via.iface.choices.get(name);
    if (choice === undefined) {
      const id = via.kind === 'template' ? via.template.templateId : via.iface.interfaceId;
      throw new SandboxApiError(
        'INVALID_ARGUMENT',
        `The submitted request has invalid arguments: Invalid template:${id} or choice:${name}`,
      );
    }
    // A null choice argument is the empty record (SchemaProcessorsImpl.nullToEmpty).
    out.choiceArgument = decoded(recordType(choice.argument), body.choiceArgument ?? {});
  }
}
