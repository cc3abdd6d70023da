import { readFile } from 'node:fs/promises';
import { sha256Hex } from '../../core/sha256-hex.js';
import type { RuleFile } from '../../rules/load-rules.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { offlineSources } from './catalogue-sources.js';
import { configRuleParties } from './config-rule-parties.js';
import type { LoadedCatalogue } from './package-catalogue-reader.js';

/**
 * The key of everything a rule load of `run` reads besides the code: what `compiled-rules.json`
 * (compiled-rules-file.ts) is valid for.
 */

/** Everything a rule load reads: a change to any of them changes the key. */
export type RuleInputs = {
  readonly version: string;
  readonly files: readonly RuleFile[];
  readonly parties: Readonly<Record<string, string>>;
  readonly defaultRetry: unknown;
  /** The offline catalogue's package ids (content hashes) and whether it is complete. */
  readonly packageIds: readonly string[];
  readonly complete: boolean | undefined;
  /** The model files (path and bytes): a model's package is built from its text. */
  readonly models: readonly { readonly path: string; readonly text: string }[];
};

/** The sha256 of the inputs, in a form that does not depend on key order in the config. */
export function ruleInputsKeyOf(inputs: RuleInputs): string {
  const sorted = Object.keys(inputs.parties)
    .sort()
    .map((alias) => [alias, inputs.parties[alias]]);
  return sha256Hex(
    JSON.stringify([
      inputs.version,
      inputs.files.map((f) => [f.path, sha256Hex(f.text)]),
      sorted,
      inputs.defaultRetry ?? null,
      [...inputs.packageIds].sort(),
      inputs.complete ?? null,
      inputs.models.map((m) => [m.path, sha256Hex(m.text)]),
    ]),
  );
}

/** The key of a load's inputs: `config`'s, the files and the catalogue read for it. */
export async function ruleInputsKey(
  config: BotConfig,
  files: readonly RuleFile[],
  loaded: LoadedCatalogue | undefined,
  version: string,
): Promise<string> {
  const models = offlineSources(config, {}).models;
  return ruleInputsKeyOf({
    version,
    files,
    parties: configRuleParties(config),
    defaultRetry: config.submission.retry,
    packageIds: loaded?.catalogue.packages.map((p) => p.packageId) ?? [],
    complete: loaded?.catalogue.complete,
    models: await Promise.all(
      models.map(async (path) => ({ path, text: await readFile(path, 'utf8') })),
    ),
  });
}
