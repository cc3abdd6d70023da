import { writeDar } from '../../daml-lf/write-dar.js';
import type { ConfiguredPath } from '../../runtime/config/bot-config.js';
import type { SandboxDar } from '../../sandbox/load-sandbox-packages.js';
import { PackageFileReader } from './read-package-files.js';

/**
 * `ledger.packages` as the embedded sandbox takes them (DARs): a DAR file as it is, a DALF
 * wrapped in a DAR of its own, a directory as its files. The sandbox then lists and serves the
 * same packages the rules were checked against, and runs their templates. A bad file is a
 * UsageError naming the config entry, as when the rules were checked. `reader`: the one that
 * read them for the rules, so their packages are not decoded again here.
 */
export async function sandboxDarsOf(
  packages: readonly ConfiguredPath[],
  reader: PackageFileReader = new PackageFileReader(),
): Promise<SandboxDar[]> {
  const files = await reader.read(
    packages.map((p) => ({ path: p.path, namedAt: `${p.at}: \`ledger.packages\`` })),
  );
  return files.map((f) =>
    f.kind === 'dar' ? f.file : writeDar({ main: f.packages[0]!, dependencies: [] }),
  );
}
