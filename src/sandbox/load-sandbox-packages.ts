import { readFile } from 'node:fs/promises';
import { PackageCatalogue } from '../daml-lf/package-catalogue.js';
import type { PackageArchive } from '../daml-lf/read-dalf.js';
import { readDar } from '../daml-lf/read-dar.js';
import { CelEnvironment } from '../rules/cel/cel-environment.js';
import { DarDefinitions } from './model/dar-definitions.js';
import { loadModels, type ModelSource } from './model/load-models.js';
import { modelSignature } from './model/model-signature.js';
import type { PackageModel } from './model/model-types.js';
import { checkOneModelPerPackage } from './model/one-model-per-package.js';
import { SandboxConfigError } from './sandbox-config-error.js';

/** A DAR to register: its path, or its bytes. */
export type SandboxDar = string | Uint8Array;

/** What the sandbox runs and serves. */
export type SandboxPackages = {
  /** Every package with templates or interfaces, as the engine runs it. */
  readonly models: readonly PackageModel[];
  /**
   * Every package's `ArchivePayload`, by id, in the order `GET /v2/packages` lists them: the
   * DARs' (each id once), then the models' own.
   */
  readonly archives: ReadonlyMap<string, Uint8Array>;
};

async function fileBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new SandboxConfigError(`cannot read ${what} ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * Reads the DARs (every package of each, hashes checked, each id decoded once), then the model
 * files against them (a model may implement a DAR's interface, or describe a DAR's package), and
 * makes a runnable package of every DAR package no model describes. Throws the reader's
 * `DamlLfError` (naming the DAR and the entry), a ModelError (file:line:col), or a
 * SandboxConfigError.
 */
export async function loadSandboxPackages(options: {
  readonly dars: readonly SandboxDar[];
  readonly models: readonly (string | PackageModel)[];
}): Promise<SandboxPackages> {
  const read = new Map<string, PackageArchive>();
  const fileOf = new Map<string, string>();
  for (const [i, dar] of options.dars.entries()) {
    const source = typeof dar === 'string' ? dar : `dars[${i}]`;
    const bytes = typeof dar === 'string' ? await fileBytes(dar, 'the DAR') : dar;
    const { packages } = await readDar(bytes, { source, known: read });
    for (const p of packages) {
      if (read.has(p.packageId)) continue;
      read.set(p.packageId, p);
      fileOf.set(p.packageId, source);
    }
  }
  const darCatalogue = PackageCatalogue.create([...read.values()].map((p) => p.signature));
  const given = options.models.filter((m): m is PackageModel => typeof m !== 'string');
  const sources: ModelSource[] = [];
  for (const m of options.models) {
    if (typeof m === 'string') {
      sources.push({ file: m, text: new TextDecoder().decode(await fileBytes(m, 'model file')) });
    }
  }
  const { models: loaded } = loadModels(sources, {
    cel: CelEnvironment.create(),
    packages: darCatalogue.with(given.filter((m) => m.source === 'model').map(modelSignature)),
  });
  const models = [...given, ...loaded];
  checkOneModelPerPackage(models);
  const described = new Set(models.map((m) => m.packageId));
  const dar = DarDefinitions.of(darCatalogue);
  const runnable: PackageModel[] = [];
  for (const p of read.values()) {
    const sig = p.signature;
    const hasEntities = sig.modules.some((m) => m.templates.length + m.interfaces.length > 0);
    if (hasEntities && !described.has(p.packageId)) {
      runnable.push(dar.packageModel(sig, fileOf.get(p.packageId) ?? ''));
    }
  }
  const archives = new Map<string, Uint8Array>();
  for (const p of read.values()) archives.set(p.packageId, p.payload);
  for (const m of models) if (m.archive !== null) archives.set(m.packageId, m.archive.payload);
  return { models: [...runnable, ...models], archives };
}
