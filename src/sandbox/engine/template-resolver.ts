import { compareVersions } from '../../daml-lf/package-catalogue.js';
import type { InterfaceDef, PackageModel, TemplateDef } from '../model/model-types.js';
import { engineError, type EngineError } from './engine-error.js';

export type ResolvedId =
  | { readonly kind: 'template'; readonly template: TemplateDef }
  | { readonly kind: 'interface'; readonly iface: InterfaceDef };

/**
 * Resolves `#package-name:Module:Entity` and `<package-id>:Module:Entity` references. A name
 * reference picks the newest version of the package with that name (of two of the same version,
 * the one loaded last): the sandbox has no vetting.
 */
export class TemplateResolver {
  readonly #byId = new Map<string, PackageModel>();
  readonly #byName = new Map<string, PackageModel>();
  readonly #cache = new Map<string, ResolvedId | EngineError>();

  constructor(packages: readonly PackageModel[]) {
    for (const p of packages) {
      this.#byId.set(p.packageId, p);
      const known = this.#byName.get(p.name);
      if (known === undefined || compareVersions(p.version, known.version) >= 0) {
        this.#byName.set(p.name, p);
      }
    }
  }

  resolve(id: string): ResolvedId | EngineError {
    let hit = this.#cache.get(id);
    if (hit === undefined) {
      hit = this.#resolve(id);
      if (this.#cache.size < 10_000) this.#cache.set(id, hit);
    }
    return hit;
  }

  #resolve(id: string): ResolvedId | EngineError {
    const parts = id.split(':');
    if (parts.length !== 3 || parts.some((p) => p === '')) {
      return engineError(
        'INVALID_ARGUMENT',
        8,
        `The submitted request has invalid arguments: Invalid identifier: ${id}, expected format (<package>:<moduleName>:<entityName>)`,
      );
    }
    const [pkgRef, moduleName, entity] = parts as [string, string, string];
    const qualified = `${moduleName}:${entity}`;
    let pkg: PackageModel | undefined;
    if (pkgRef.startsWith('#')) {
      pkg = this.#byName.get(pkgRef.slice(1));
      if (pkg === undefined) {
        return engineError(
          'PACKAGE_NAMES_NOT_FOUND',
          11,
          `The following package names do not match upgradable packages uploaded on this participant: [${pkgRef.slice(1)}].`,
          {
            resources: [['PACKAGE_NAME', pkgRef.slice(1)]],
          },
        );
      }
    } else {
      pkg = this.#byId.get(pkgRef);
    }
    const template = pkg?.templates.get(qualified);
    if (template !== undefined) return { kind: 'template', template };
    const iface = pkg?.interfaces.get(qualified);
    if (iface !== undefined) return { kind: 'interface', iface };
    return engineError(
      'TEMPLATES_OR_INTERFACES_NOT_FOUND',
      11,
      `The following template or interface ids are not vetted on the participant: [${id}].`,
      {
        resources: [['TEMPLATE_ID', id]],
      },
    );
  }
}
