import { SandboxConfigError } from '../sandbox-config-error.js';
import type { PackageModel } from './model-types.js';

/**
 * Refuses two models of one package: per id (a DAR's package described twice) and per name and
 * version (two packages of their own that a participant would not both accept). The sandbox
 * checks it at start and the CLI when it assembles its catalogue, so both refuse the same files.
 * Throws SandboxConfigError naming both files.
 */
export function checkOneModelPerPackage(models: readonly PackageModel[]): void {
  const seen = new Map<string, PackageModel>();
  for (const m of models) {
    for (const key of [m.packageId, `${m.name} ${m.version}`]) {
      const other = seen.get(key);
      if (other !== undefined && other !== m) {
        throw new SandboxConfigError(
          `${m.file} and ${other.file} both describe package ${m.name} ${m.version}: give each model its own package name or version`,
        );
      }
      seen.set(key, m);
    }
  }
}
