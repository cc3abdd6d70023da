import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import type { PackageSignature } from '../../daml-lf/package-signature.js';
import type { CallOptions } from '../../ledger/http-transport.js';
import type {
  PackageReadStats,
  ParticipantPackageSource,
  UnreadablePackage,
} from '../../runtime/participant-package-source.js';
import { CelEnvironment } from '../../rules/cel/cel-environment.js';
import type { ModelSource } from '../../sandbox/model/load-models.js';
import type { PackageModel } from '../../sandbox/model/model-types.js';
import { UsageError } from '../usage-error.js';
import { PackageFileReader, type PackageFileInput } from './read-package-files.js';

/**
 * The one catalogue of Daml packages that rules are type-checked against and that `packages`
 * prints, from every source a command has: package files (`ledger.packages`, `--dar`), sandbox
 * models (`--model`, `ledger.embedded.models`) and the participant's own packages. One reader
 * per process: `run` keeps it for every reload, so a package id is decoded once, and a reload
 * re-lists the participant's packages and reads only the new ones.
 */

/** Where a package of the catalogue was read from (its first source, when it has several). */
export type PackageOrigin =
  | { readonly kind: 'participant'; readonly url: string }
  | { readonly kind: 'file'; readonly file: string }
  | { readonly kind: 'model'; readonly file: string };

export type CatalogueSources = {
  readonly files?: readonly PackageFileInput[];
  /** Sandbox model files, as paths given. */
  readonly models?: readonly string[];
  /** Read the participant's packages too (a config with `url`, unless offline). */
  readonly participant?: { readonly source: ParticipantPackageSource; readonly url: string };
  /**
   * The catalogue is every package the ledger has though no participant is read: an embedded
   * sandbox holds exactly the models and package files it is given.
   */
  readonly complete?: boolean;
};

export type LoadedCatalogue = {
  readonly catalogue: PackageCatalogue;
  readonly origins: ReadonlyMap<string, PackageOrigin>;
  /** Participant packages that could not be decoded (the catalogue is then not complete). */
  readonly unreadable: readonly UnreadablePackage[];
  /** How the participant's packages were read, when they were. */
  readonly participant?: PackageReadStats;
  /** One line per source: what was read from where, for `validate` and the start-up log. */
  readonly summary: readonly string[];
};

export class PackageCatalogueReader {
  readonly #files: PackageFileReader;
  readonly #cel = CelEnvironment.create();

  /** `files`: the package files read so far, when shared with another reader of them. */
  constructor(files: PackageFileReader = new PackageFileReader()) {
    this.#files = files;
  }

  /**
   * Every package of `sources`, or undefined when there is no source at all (nothing to check
   * against: rules are then checked without types). Throws UsageError for a bad file or model
   * (exit 2) and the client's errors when the participant cannot be read.
   */
  async read(
    sources: CatalogueSources,
    options: CallOptions = {},
  ): Promise<LoadedCatalogue | undefined> {
    const files = sources.files ?? [];
    const models = sources.models ?? [];
    if (files.length === 0 && models.length === 0 && sources.participant === undefined) {
      return undefined;
    }
    const packages: PackageSignature[] = [];
    const origins = new Map<string, PackageOrigin>();
    const summary: string[] = [];
    const add = (pkg: PackageSignature, origin: PackageOrigin): void => {
      if (origins.has(pkg.packageId)) return;
      origins.set(pkg.packageId, origin);
      packages.push(pkg);
    };
    for (const file of await this.#files.read(files)) {
      for (const p of file.packages) add(p.signature, { kind: 'file', file: file.file });
      const main = file.packages[0]?.signature;
      summary.push(
        `${file.packages.length} package(s) from ${file.file}` +
          (main === undefined ? '' : ` (${main.name} ${main.version})`),
      );
    }
    // Models after the package files and against them only (not the participant's packages),
    // each after the models whose interfaces it implements: as the sandbox loads them.
    for (const model of await this.#models(models, PackageCatalogue.create(packages))) {
      if (model.source === 'model') {
        const { modelSignature } = await import('../../sandbox/model/model-signature.js');
        add(modelSignature(model), { kind: 'model', file: model.file });
        summary.push(`1 package from the model ${model.file} (${model.name} ${model.version})`);
      } else {
        const of = origins.get(model.packageId);
        summary.push(
          `the model ${model.file} describes ${model.name} ${model.version}` +
            (of?.kind === 'file' ? ` of ${of.file}` : ''),
        );
      }
    }
    let unreadable: readonly UnreadablePackage[] = [];
    let stats: PackageReadStats | undefined;
    if (sources.participant !== undefined) {
      const { source, url } = sources.participant;
      const read = await source.read({ ...options, have: new Set(origins.keys()) });
      for (const pkg of read.packages) add(pkg, { kind: 'participant', url });
      unreadable = read.unreadable;
      stats = read.stats;
      summary.push(
        `${read.stats.listed} package(s) from the participant at ${url} (` +
          `${read.stats.downloaded} downloaded, ${read.stats.fromCache} from the cache` +
          (read.stats.known > 0 ? `, ${read.stats.known} read before` : '') +
          (unreadable.length > 0 ? `, ${unreadable.length} unreadable` : '') +
          ')',
      );
    }
    const complete =
      (sources.participant !== undefined || sources.complete === true) && unreadable.length === 0;
    return {
      catalogue: PackageCatalogue.create(packages, { complete }),
      origins,
      unreadable,
      ...(stats === undefined ? {} : { participant: stats }),
      summary,
    };
  }

  /**
   * The models of `paths` (a file named twice is read once) loaded with `loadModels` over
   * `packages`, in the order given. Throws UsageError for a file that cannot be read, a model
   * that does not load (its file:line:col) or two models of one package.
   */
  async #models(paths: readonly string[], packages: PackageCatalogue): Promise<PackageModel[]> {
    const sources: ModelSource[] = [];
    const seen = new Set<string>();
    for (const path of paths) {
      if (seen.has(resolve(path))) continue;
      seen.add(resolve(path));
      try {
        sources.push({ file: path, text: await readFile(resolve(path), 'utf8') });
      } catch (error) {
        throw new UsageError(`cannot use model ${path}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    if (sources.length === 0) return [];
    // The sandbox's model loader is loaded only for a config with models (not by every `run`).
    const [{ loadModels }, { ModelError }, { checkOneModelPerPackage }] = await Promise.all([
      import('../../sandbox/model/load-models.js'),
      import('../../sandbox/model/model-error.js'),
      import('../../sandbox/model/one-model-per-package.js'),
    ]);
    try {
      const { models } = loadModels(sources, { cel: this.#cel, packages });
      checkOneModelPerPackage(models);
      const order = new Map(sources.map((s, i) => [s.file, i]));
      return [...models].sort((a, b) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0));
    } catch (error) {
      const file = error instanceof ModelError ? `model ${error.file}` : 'models';
      throw new UsageError(`cannot use ${file}: ${(error as Error).message}`, { cause: error });
    }
  }
}
