import { DEFAULTS } from '../../core/defaults.js';
import { closestMatch } from '../../core/source/index.js';
import {
  referenceText,
  type CatalogueEntry,
  type PackageCatalogue,
} from '../../daml-lf/package-catalogue.js';
import { isPackageId } from '../../ledger/package-archive.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { CliIo } from '../cli-io.js';
import { openCatalogueSources } from '../compose/catalogue-sources.js';
import {
  PackageCatalogueReader,
  type LoadedCatalogue,
} from '../compose/package-catalogue-reader.js';
import { readConfig } from '../compose/read-config.js';
import { defineCommand } from '../define-command.js';
import { colourFor, NO_COLOR_OPTION } from '../present/colour.js';
import { entrySignatureText, usedDataTypes } from '../present/entry-signature-text.js';
import { packageListText } from '../present/package-list-text.js';
import { entryView, packageListView, refText } from '../present/package-view.js';
import { UsageError } from '../usage-error.js';

const ACTIONS = ['list', 'show'] as const;

export const packagesCommand = defineCommand({
  name: 'packages',
  summary: 'list the Daml packages rules are checked against, or show one template or interface',
  usage: `packages list|show REF [--dar FILE... | --config FILE] [--model FILE...] [--json]`,
  description: `Prints the Daml packages rules are type-checked against: from DAR or DALF files (--dar),
or from everything the bot would read (--config: \`ledger.packages\`, the embedded sandbox's
models, and, when the config has a \`url\`, every package of the participant, downloaded once
and cached in state.dir/packages/).

  list       every package (id, name, version) with its templates and interfaces: fields,
             key, implemented interfaces, interface views, choices with argument and result
  show REF   one template or interface as Daml declares it, with the data types it uses;
             REF is '#package-name:Module:Entity' (as rules write it), '<package-id>:Module:Entity'
             or 'Module:Entity' when only one package has it

Without --dar or --config, ./${DEFAULTS.cli.configFile} is read.`,
  options: {
    dar: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'a DAR or DALF file, or a directory of them (repeatable)',
    },
    config: {
      type: 'string',
      value: 'FILE',
      help: `the bot config: its packages, models and participant (default ./${DEFAULTS.cli.configFile})`,
    },
    model: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'a sandbox model file, as the package rules see it (repeatable)',
    },
    offline: {
      type: 'boolean',
      default: false,
      help: "with --config: do not read the participant's packages",
    },
    json: { type: 'boolean', default: false, help: 'print JSON (docs/operations.md)' },
    ...NO_COLOR_OPTION,
  },
  positionals: true,
  footer: `Exit status: 0 done, 1 when show finds no such template or interface or the participant
cannot be read, 2 for usage errors and bad package, model or config files.`,
  run: async ({ values, positionals }, io) => {
    const [action, ref, ...extra] = positionals;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(
        `packages needs list or show${action === undefined ? '' : `, not "${action}"`}`,
      );
    }
    if (action === 'show' && ref === undefined) {
      throw new UsageError(
        "packages show needs a template or interface: '#package-name:Module:Entity'",
      );
    }
    const surplus = action === 'list' ? [ref, ...extra] : extra;
    if (surplus.some((w) => w !== undefined)) {
      throw new UsageError(`packages ${action} takes ${action === 'list' ? 'no' : 'one'} argument`);
    }
    const dars = values.dar ?? [];
    if (dars.length > 0 && values.config !== undefined) {
      throw new UsageError('pass --dar FILE or --config FILE, not both');
    }
    const models = values.model ?? [];
    // Files named on the command line are the packages asked about: ./bot.config.yaml (and its
    // participant) is read only when nothing else is named.
    const config =
      values.config !== undefined
        ? await readConfig(values.config)
        : dars.length > 0 || models.length > 0
          ? undefined
          : await readConfig(DEFAULTS.cli.configFile);
    const loaded = await readPackages(config, dars, models, values.offline);
    if (action === 'list') {
      const view = packageListView(loaded.catalogue, loaded.origins, loaded.summary);
      io.out(
        values.json
          ? `${JSON.stringify(view, null, 2)}\n`
          : packageListText(view, colourFor(io, values['no-color'])),
      );
      return 0;
    }
    return show(loaded.catalogue, ref!, values.json, io);
  },
});

async function readPackages(
  config: BotConfig | undefined,
  dars: readonly string[],
  models: readonly string[],
  offline: boolean,
): Promise<LoadedCatalogue> {
  const opened = await openCatalogueSources(config, { dars, models, offline });
  try {
    const loaded = await new PackageCatalogueReader().read(opened.sources);
    if (loaded === undefined) {
      throw new UsageError(
        `no packages to read: ${config === undefined ? 'pass --dar FILE or --model FILE' : `${config.file} has no \`ledger.packages\`, embedded models or \`url\``}`,
      );
    }
    return loaded;
  } finally {
    await opened.close();
  }
}

function show(catalogue: PackageCatalogue, text: string, json: boolean, io: CliIo): number {
  const found = lookUp(catalogue, text);
  if (found.length === 0) {
    const guess = didYouMean(catalogue, text);
    io.err(
      `ledgerbot: no template or interface ${text} in the ${catalogue.packages.length} package(s) read` +
        (guess === undefined ? '' : `; did you mean ${guess}?`) +
        '\n',
    );
    return 1;
  }
  const entry = found[0]!;
  const others = found.slice(1).map((e) => `${e.pkg.name} ${e.pkg.version} (${e.pkg.packageId})`);
  if (json) {
    const view = {
      entry: entryView(catalogue, entry),
      package: {
        packageId: entry.pkg.packageId,
        name: entry.pkg.name,
        version: entry.pkg.version,
      },
      dataTypes: usedDataTypes(catalogue, entry).map((u) => ({
        ref: refText(catalogue, u.ref),
        params: u.dataType.params,
        shape: u.dataType.shape,
      })),
      alsoIn: others,
    };
    io.out(`${JSON.stringify(view, null, 2)}\n`);
    return 0;
  }
  io.out(entrySignatureText(catalogue, entry));
  if (others.length > 0) io.err(`note: ${text} is also in ${others.join(', ')}\n`);
  return 0;
}

/**
 * The entries a reference names, newest package version first: `#name:M:E`, `<id>:M:E`, or
 * `M:E` in any package. Anything else names none.
 */
function lookUp(catalogue: PackageCatalogue, text: string): CatalogueEntry[] {
  const parts = text.split(':');
  if (parts.length === 3) {
    const [pkg, module, entity] = parts as [string, string, string];
    if (pkg.startsWith('#')) {
      return catalogue.entries({ form: 'package-name', packageName: pkg.slice(1), module, entity });
    }
    if (isPackageId(pkg)) {
      return catalogue.entries({ form: 'package-id', packageId: pkg, module, entity });
    }
    return [];
  }
  return parts.length === 2 ? [...catalogue.entriesNamed(text)] : [];
}

/** The closest reference to a misspelt one (`#name:M:E` or just `M:E`), as a rule writes it. */
function didYouMean(catalogue: PackageCatalogue, text: string): string | undefined {
  const entries = catalogue.allEntries();
  const byRef = new Map(entries.map((e) => [referenceText(e), e] as const));
  const full = closestMatch(text, byRef.keys());
  if (full !== undefined) return full;
  const qualified = new Map<string, CatalogueEntry>(
    entries.map((e) => [`${e.ref.module}:${e.ref.name}`, e]),
  );
  const short = closestMatch(text.split(':').slice(-2).join(':'), qualified.keys());
  const entry = short === undefined ? undefined : qualified.get(short);
  return entry === undefined ? undefined : referenceText(entry);
}
