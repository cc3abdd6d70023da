import { LedgerbotError } from '../../core/ledgerbot-error.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { openCatalogueSources, type PackageFlags } from './catalogue-sources.js';
import { PackageCatalogueReader, type LoadedCatalogue } from './package-catalogue-reader.js';

/**
 * The catalogue `validate` and `test` check rules against, with what to tell the user about it:
 * one note per source ("types from …"), and a warning when the participant's packages could not
 * be read. Those commands check files and need no running participant: one that does not
 * answer (or refuses) leaves the rules checked against the package files and models alone
 * (`complete: false`, so an unknown package name is a warning), and says so.
 */

export type RuleCatalogue = {
  /** Undefined when there is no source at all: rules are then checked without types. */
  readonly loaded: LoadedCatalogue | undefined;
  /** Where the types came from, one line per source. */
  readonly notes: readonly string[];
  /** The participant's packages were wanted but not read. */
  readonly warnings: readonly string[];
};

export async function readRuleCatalogue(
  config: BotConfig | undefined,
  flags: PackageFlags & {
    /** Why the participant's packages are not to be read (e.g. credentials not given). */
    readonly skipParticipant?: string;
  },
): Promise<RuleCatalogue> {
  const opened = await openCatalogueSources(
    config,
    flags,
    flags.skipParticipant === undefined ? {} : { skipParticipant: flags.skipParticipant },
  );
  const notes: string[] = [];
  const warnings: string[] = [];
  const reader = new PackageCatalogueReader();
  try {
    let loaded: LoadedCatalogue | undefined;
    try {
      loaded = await reader.read(opened.sources);
    } catch (err) {
      const participant = opened.sources.participant;
      if (!(participant !== undefined && isUnreadable(err))) throw err;
      warnings.push(
        `${(err as Error).message.replace(/\.$/, '')}; the rules were checked without the participant's packages (--offline skips it)`,
      );
      const { participant: _skipped, ...offline } = opened.sources;
      loaded = await reader.read(offline);
    }
    if (opened.participantSkipped !== undefined && opened.participantSkipped !== '--offline') {
      notes.push(`the participant's packages were not read: ${opened.participantSkipped}`);
    }
    for (const line of loaded?.summary ?? []) notes.push(`types from ${line}`);
    for (const u of loaded?.unreadable ?? []) {
      warnings.push(`the participant's package ${u.packageId} cannot be read: ${u.reason}`);
    }
    return { loaded, notes, warnings };
  } finally {
    await opened.close();
  }
}

function isUnreadable(err: unknown): boolean {
  return err instanceof LedgerbotError && err.code === 'PACKAGES_UNREADABLE';
}
