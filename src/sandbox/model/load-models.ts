import type { ParsedYamlSource } from '../../core/source/index.js';
import { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import { CelEnvironment } from '../../rules/cel/cel-environment.js';
import { loadParsedModel, parseModelSource } from './load-model.js';
import { modelSignature } from './model-signature.js';
import type { PackageModel } from './model-types.js';

/** A model file's text and the name it is reported under. */
export type ModelSource = { readonly text: string; readonly file: string };

export type LoadModelsOptions = {
  readonly cel?: CelEnvironment;
  /** Packages loaded before (DARs' signatures); default none. */
  readonly packages?: PackageCatalogue;
};

export type LoadedModels = {
  /** In the order they were compiled: a model after the models whose interfaces it implements. */
  readonly models: readonly PackageModel[];
  /** `packages` with the signature of every model that is a package of its own. */
  readonly packages: PackageCatalogue;
};

const REFERENCE = /^#([A-Za-z][A-Za-z0-9_-]*):/;

/**
 * A model file parsed (once: loading compiles this parse), the package name it declares and the
 * package names its `implements` keys name.
 */
function scan(source: ModelSource): {
  parsed: ParsedYamlSource;
  name: string | null;
  uses: Set<string>;
} {
  const parsed = parseModelSource(source.text, source.file);
  const uses = new Set<string>();
  if (!parsed.ok) return { parsed, name: null, uses };
  const raw = parsed.source.value as {
    package?: { name?: unknown };
    templates?: Record<string, { implements?: Record<string, unknown> } | null>;
  } | null;
  for (const t of Object.values(raw?.templates ?? {})) {
    for (const key of Object.keys(t?.implements ?? {})) {
      const m = REFERENCE.exec(key);
      if (m !== null) uses.add(m[1]!);
    }
  }
  const name = raw?.package?.name;
  return { parsed, name: typeof name === 'string' ? name : null, uses };
}

/**
 * Loads several model files, each after the ones whose interfaces it implements
 * (`#package-name:…`), otherwise in the order given, with one CEL environment. Each model sees
 * the DARs' packages (`options.packages`) and the models loaded before it, so a template may
 * implement another model's interface, and a model may describe a DAR's package. Throws the
 * first ModelError; a model that takes part in a cycle is loaded in order and its reference
 * reported there (unknown package).
 */
export function loadModels(
  sources: readonly ModelSource[],
  options: LoadModelsOptions = {},
): LoadedModels {
  const cel = options.cel ?? CelEnvironment.create();
  let packages = options.packages ?? PackageCatalogue.create([]);
  const scanned = sources.map(scan);
  const declared = new Set(scanned.map((s) => s.name).filter((n) => n !== null));
  const pending = [...scanned];
  const models: PackageModel[] = [];
  const loadedNames = new Set<string>();
  while (pending.length > 0) {
    // The first model whose models-to-be are all loaded; else (a cycle) the first one.
    let i = pending.findIndex((p) =>
      [...p.uses].every((u) => u === p.name || !declared.has(u) || loadedNames.has(u)),
    );
    if (i < 0) i = 0;
    const [next] = pending.splice(i, 1);
    const model = loadParsedModel(next!.parsed, { cel, packages });
    models.push(model);
    loadedNames.add(model.name);
    if (model.source === 'model') packages = packages.with([modelSignature(model)]);
  }
  return { models, packages };
}
