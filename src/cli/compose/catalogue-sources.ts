import type { Logger } from '../../core/logger.js';
import { DAR_LIMITS } from '../../daml-lf/dar-limits.js';
import type { LedgerClient } from '../../ledger/ledger-client.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { ParticipantPackageSource } from '../../runtime/participant-package-source.js';
import { PackageArchiveCache } from '../../store/package-archive-cache.js';
import { openConfigLedger } from './open-config-ledger.js';
import type { CatalogueSources } from './package-catalogue-reader.js';
import type { PackageFileInput } from './read-package-files.js';

/**
 * Which packages a command checks rules against, from the config and its flags: the config's
 * `ledger.packages` and `--dar` files, the embedded sandbox's models and `--model` files, and
 * the participant's own packages when the config has a `url` (not with `--offline`). The same
 * for `validate`, `test`, `packages` and `run`, so each sees the types the bot will run with.
 */

export type PackageFlags = {
  /** `--dar FILE` (repeatable): DAR or DALF files, or directories of them. */
  readonly dars?: readonly string[];
  /** `--model FILE` (repeatable). */
  readonly models?: readonly string[];
  /** `--offline`: do not read the participant's packages. */
  readonly offline?: boolean;
};

/** The offline sources of a config and flags (files and models); the participant is added apart. */
export function offlineSources(
  config: BotConfig | undefined,
  flags: PackageFlags,
): Required<Pick<CatalogueSources, 'files' | 'models'>> & { readonly complete: boolean } {
  const endpoint = config?.ledger.endpoint;
  const files: PackageFileInput[] = [
    ...(config?.ledger.packages ?? []).map((p) => ({
      path: p.path,
      namedAt: `${p.at}: \`ledger.packages\``,
    })),
    ...(flags.dars ?? []).map((path) => ({ path, namedAt: '--dar' })),
  ];
  const models = [
    ...(flags.models ?? []),
    ...(endpoint?.kind === 'embedded' ? endpoint.models : []),
  ];
  // An embedded sandbox holds exactly its models and package files: nothing else to refer to.
  return { files, models, complete: endpoint?.kind === 'embedded' };
}

/**
 * The participant's package source for a client: the cache in the config's state directory.
 * `run` makes one per process (reloads reuse it); so does every other command.
 */
export function participantSourceOf(
  client: LedgerClient,
  config: BotConfig,
  logger?: Logger,
): ParticipantPackageSource {
  return new ParticipantPackageSource({
    ledger: client,
    cache: new PackageArchiveCache({
      stateDir: config.state.dir,
      maxBytes: DAR_LIMITS.maxEntryBytes,
    }),
    ...(logger === undefined ? {} : { logger: logger.child({ component: 'packages' }) }),
  });
}

export type OpenedSources = {
  readonly sources: CatalogueSources;
  /** Why the participant's packages are not read although the config has a `url`. */
  readonly participantSkipped?: string;
  /** Closes the client opened for the participant, if one was. */
  close(): Promise<void>;
};

/**
 * Every source of a config and flags, opening a client to the participant when its packages are
 * to be read (`skipParticipant`: the reason they are not, e.g. credentials `validate` was not
 * given). Without a config: the flags' files and models only.
 */
export async function openCatalogueSources(
  config: BotConfig | undefined,
  flags: PackageFlags,
  options: { readonly skipParticipant?: string; readonly logger?: Logger } = {},
): Promise<OpenedSources> {
  const offline = offlineSources(config, flags);
  const endpoint = config?.ledger.endpoint;
  if (config === undefined || endpoint?.kind !== 'url') {
    return { sources: offline, close: () => Promise.resolve() };
  }
  const skipped = flags.offline === true ? '--offline' : options.skipParticipant;
  if (skipped !== undefined) {
    return {
      sources: { files: offline.files, models: offline.models },
      participantSkipped: skipped,
      close: () => Promise.resolve(),
    };
  }
  const ledger = await openConfigLedger(config, options.logger);
  return {
    sources: {
      files: offline.files,
      models: offline.models,
      participant: {
        source: participantSourceOf(ledger.client, config, options.logger),
        url: endpoint.url,
      },
    },
    close: () => ledger.close(),
  };
}
