/**
 * The templates (and interfaces) the ledger knows, for checking rule references at load time.
 * The runtime builds it from the sandbox's models or from `GET /v2/packages`; without one,
 * unknown templates and choices are only found when commands are rejected.
 */
export type PackageCatalogue = {
  readonly templates: readonly CatalogueTemplate[];
};

export type CatalogueTemplate = {
  readonly packageName: string;
  /** Set when known; lets package-id references be checked too. */
  readonly packageId?: string;
  /** Dotted module path, e.g. "Invoice". */
  readonly module: string;
  readonly entity: string;
  /** Choice names, including inherited Archive. */
  readonly choices: readonly string[];
  /** Whether the template has a contract key (needed by exerciseByKey); unknown when absent. */
  readonly hasKey?: boolean;
};
