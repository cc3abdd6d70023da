import { LineCounter, parseDocument } from 'yaml';
import { lazyValidator } from '../../core/lazy-validator.js';
import { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { ModelProblems } from './model-error.js';
import { compileModel } from './model-compiler.js';
import { ModelLocator } from './model-locator.js';
import { MODEL_SCHEMA } from './model-schema.js';
import { modelSchemaProblems } from './model-schema-problems.js';
import type { PackageModel } from './model-types.js';
import type { RawModel } from './raw-model.js';

const modelValidator = lazyValidator<RawModel>({ allErrors: true, strict: false }, MODEL_SCHEMA);

export type LoadModelOptions = {
  /** Share one environment across files; building one is the expensive part. */
  readonly cel?: CelEnvironment;
};

/**
 * Parses, validates and compiles one model file. Throws ModelError (code INVALID_MODEL) with
 * every problem found, each at file:line:col: YAML syntax, then the schema, then types,
 * references and CEL (a phase runs only when the one before found nothing).
 */
export function loadModel(
  text: string,
  file: string,
  options: LoadModelOptions = {},
): PackageModel {
  const problems = new ModelProblems();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const at = new ModelLocator(file, text, doc, lines);
  for (const e of doc.errors) {
    problems.add(at.at(e.pos[0]), `YAML syntax: ${e.message.split('\n')[0] ?? ''}`);
  }
  problems.throwIfAny();
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    problems.add(at.pos([]), `YAML: ${(error as Error).message}`, error);
    problems.throwIfAny();
  }
  const validate = modelValidator();
  if (!validate(raw)) {
    for (const p of modelSchemaProblems(validate.errors ?? [], at)) problems.add(p, p.problem);
    problems.throwIfAny();
  }
  const model = compileModel(raw as RawModel, at, options.cel ?? CelEnvironment.create(), problems);
  problems.throwIfAny();
  return model;
}
