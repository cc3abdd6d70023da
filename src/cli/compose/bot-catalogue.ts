import type { Logger } from '../../core/logger.js';
import type { PackageCatalogue } from '../../daml-lf/package-catalogue.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { offlineSources, participantSourceOf } from './catalogue-sources.js';
import { PackageCatalogueReader, type LoadedCatalogue } from './package-catalogue-reader.js';
import { PackageFileReader } from './read-package-files.js';

/**
 * The packages a running bot's rules are checked against, at start and at every reload: the
 * config's `ledger.packages` and embedded models from the first read on, and the participant's
 * packages once the participant answers (`connect`). One per process: a package is decoded
 * once, and each read re-lists the participant's packages and reads only new ids, so a DAR
 * uploaded while the bot runs is known at the next reload.
 */
export class BotCatalogue {
  readonly #config: BotConfig;
  readonly #logger: Logger;
  /**
   * The package files read so far: the embedded sandbox is given the same files
   * (`openConfigLedger`'s `packageFiles`), and their packages are not decoded again for it.
   */
  readonly packageFiles = new PackageFileReader();
  readonly #reader = new PackageCatalogueReader(this.packageFiles);
  #participant: Parameters<PackageCatalogueReader['read']>[0]['participant'];
  #current: PackageCatalogue | undefined;

  /**
   * The name of a package by id in the catalogue last read (`BotOptions.packageNameOf`): it
   * follows the reloads, so a package the participant gained is known from the next one on.
   */
  readonly packageNameOf = (packageId: string): string | undefined =>
    this.#current?.packageNameOf(packageId);

  constructor(config: BotConfig, logger: Logger) {
    this.#config = config;
    this.#logger = logger.child({ component: 'packages' });
  }

  /** The participant answers: its packages are read from now on (a config with `url`). */
  connect(client: LedgerClient): void {
    const endpoint = this.#config.ledger.endpoint;
    if (endpoint.kind !== 'url') return;
    this.#participant = {
      source: participantSourceOf(client, this.#config, this.#logger),
      url: endpoint.url,
    };
  }

  get connected(): boolean {
    return this.#participant !== undefined;
  }

  /**
   * Every package known now; undefined when there is no source at all (rules are then checked
   * without types). Throws UsageError for a bad package file or model, and RuntimeError
   * `PACKAGES_UNREADABLE` when the participant's packages cannot be read.
   */
  async read(): Promise<LoadedCatalogue | undefined> {
    const offline = offlineSources(this.#config, {});
    const loaded = await this.#reader.read({
      files: offline.files,
      models: offline.models,
      complete: offline.complete,
      ...(this.#participant === undefined ? {} : { participant: this.#participant }),
    });
    this.#current = loaded?.catalogue;
    if (loaded !== undefined) {
      this.#logger.info(
        {
          packages: loaded.catalogue.packages.length,
          complete: loaded.catalogue.complete,
          sources: loaded.summary,
          ...(loaded.participant === undefined ? {} : { participant: loaded.participant }),
        },
        'packages read',
      );
    }
    return loaded;
  }
}
