import { parseYamlSource, type ParsedYamlSource } from '../../core/source/index.js';
import { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { checkModelSchema } from './check-model-schema.js';
import { ModelProblems } from './model-error.js';
import { compileModel } from './model-compiler.js';
import { ModelLocator } from './model-locator.js';
import type { PackageModel } from './model-types.js';
import type { RawModel } from './raw-model.js';

export type LoadModelOptions = {
  /** Share one environment across files; building one is the expensive part. */
  readonly cel?: CelEnvironment;
  /**
   * The packages loaded before this model (DARs, earlier models' signatures): the interfaces a
   * template may implement as `#package-name:Module:Interface`, and the DAR's package this model
   * describes when it has the same package name and version. Default: none.
   */
  readonly packages?: PackageCatalogue;
};

const NO_PACKAGES = PackageCatalogue.create([]);

/** Guards and parses a model file's YAML (the first phase of `loadModel`). */
export function parseModelSource(text: string, file: string): ParsedYamlSource {
  return parseYamlSource(file, text, { noun: 'model file' });
}

/**
 * Parses, validates and compiles one model file. Throws ModelError (code INVALID_MODEL) with
 * every problem found, each at file:line:col: size, nesting, aliases and YAML syntax, then the
 * schema, then types, references and CEL (a phase runs only when the one before found nothing).
 */
export function loadModel(
  text: string,
  file: string,
  options: LoadModelOptions = {},
): PackageModel {
  return loadParsedModel(parseModelSource(text, file), options);
}

/** `loadModel` of a file `parseModelSource` has parsed already (its problems thrown here). */
export function loadParsedModel(
  parsed: ParsedYamlSource,
  options: LoadModelOptions = {},
): PackageModel {
  const problems = new ModelProblems();
  if (!parsed.ok) {
    problems.addAll(parsed.problems);
    return problems.fail();
  }
  const { file, text, doc, lines, value } = parsed.source;
  const at = new ModelLocator(file, text, doc, lines);
  problems.addAll(checkModelSchema(value, at).problems);
  problems.throwIfAny();
  const model = compileModel(
    value as RawModel,
    at,
    options.cel ?? CelEnvironment.create(),
    problems,
    options.packages ?? NO_PACKAGES,
  );
  problems.throwIfAny();
  return model;
}
