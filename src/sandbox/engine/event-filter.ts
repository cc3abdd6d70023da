import type { CumulativeFilter, EventFormat, Filters } from '../../ledger/wire/wire-types.js';
import { interfaceInstance } from '../model/interface-instance.js';
import type { InterfaceDef, TemplateDef } from '../model/model-types.js';
import type { EngineError } from './engine-error.js';
import type { ResolvedId } from './template-resolver.js';

/** One cumulative filter, resolved against the loaded packages. */
type Matcher =
  | { readonly kind: 'wildcard'; readonly blob: boolean }
  | {
      readonly kind: 'template';
      readonly byName: boolean;
      readonly template: TemplateDef;
      readonly blob: boolean;
    }
  | {
      readonly kind: 'interface';
      readonly byName: boolean;
      readonly iface: InterfaceDef;
      readonly view: boolean;
      readonly blob: boolean;
    };

/** What a party's filter says about one template. */
export type FilterMatch = {
  readonly blob: boolean;
  /** Interfaces whose views were requested. */
  readonly views: readonly InterfaceDef[];
};

const WILDCARD: readonly Matcher[] = [{ kind: 'wildcard', blob: false }];

function sameTemplate(m: { byName: boolean; template: TemplateDef }, t: TemplateDef): boolean {
  return m.byName
    ? m.template.packageName === t.packageName && m.template.qualifiedName === t.qualifiedName
    : m.template.templateId === t.templateId;
}

function implementsIface(m: { byName: boolean; iface: InterfaceDef }, t: TemplateDef): boolean {
  return interfaceInstance(t, m.iface, m.byName) !== undefined;
}

/**
 * An EventFormat resolved once per request: which parties ask, and for which templates. Template
 * references in the `#name` form match by package name + module + entity; package-id references
 * match the package id exactly.
 */
export class EventFilter {
  readonly #byParty: ReadonlyMap<string, readonly Matcher[]>;
  readonly #anyParty: readonly Matcher[] | null;
  readonly #cache = new Map<string, FilterMatch | null>();

  private constructor(
    byParty: ReadonlyMap<string, readonly Matcher[]>,
    anyParty: readonly Matcher[] | null,
  ) {
    this.#byParty = byParty;
    this.#anyParty = anyParty;
  }

  /** The parties named in `filtersByParty`, sorted. */
  get parties(): readonly string[] {
    return [...this.#byParty.keys()].sort();
  }

  get anyParty(): boolean {
    return this.#anyParty !== null;
  }

  static create(
    format: EventFormat,
    resolve: (id: string) => ResolvedId | EngineError,
  ): EventFilter | EngineError {
    // A filter's id resolved to the kind the filter takes (template or interface), or the error.
    const resolveAs = <K extends ResolvedId['kind']>(
      id: string,
      kind: K,
    ): Extract<ResolvedId, { kind: K }> | EngineError => {
      const r = resolve(id);
      if ('code' in r) return r;
      return r.kind === kind ? (r as Extract<ResolvedId, { kind: K }>) : notOfKind(id);
    };
    const toMatchers = (filters: Filters | undefined): readonly Matcher[] | EngineError => {
      const cumulative: readonly CumulativeFilter[] = filters?.cumulative ?? [];
      const out: Matcher[] = [];
      for (const c of cumulative) {
        const f = c.identifierFilter;
        if (f === undefined) continue;
        if ('WildcardFilter' in f) {
          out.push({
            kind: 'wildcard',
            blob: f.WildcardFilter.value.includeCreatedEventBlob ?? false,
          });
        } else if ('TemplateFilter' in f) {
          const id = f.TemplateFilter.value.templateId ?? '';
          const r = resolveAs(id, 'template');
          if ('code' in r) return r;
          out.push({
            kind: 'template',
            byName: id.startsWith('#'),
            template: r.template,
            blob: f.TemplateFilter.value.includeCreatedEventBlob ?? false,
          });
        } else if ('InterfaceFilter' in f) {
          const id = f.InterfaceFilter.value.interfaceId ?? '';
          const r = resolveAs(id, 'interface');
          if ('code' in r) return r;
          out.push({
            kind: 'interface',
            byName: id.startsWith('#'),
            iface: r.iface,
            view: f.InterfaceFilter.value.includeInterfaceView ?? false,
            blob: f.InterfaceFilter.value.includeCreatedEventBlob ?? false,
          });
        }
      }
      // No cumulative filter at all means "everything, without blobs".
      return out.length === 0 ? WILDCARD : out;
    };
    const byParty = new Map<string, readonly Matcher[]>();
    for (const [party, filters] of Object.entries(format.filtersByParty ?? {})) {
      const m = toMatchers(filters);
      if ('code' in m) return m;
      byParty.set(party, m);
    }
    let anyParty: readonly Matcher[] | null = null;
    if (format.filtersForAnyParty !== undefined) {
      const m = toMatchers(format.filtersForAnyParty);
      if ('code' in m) return m;
      anyParty = m;
    }
    return new EventFilter(byParty, anyParty);
  }

  /**
   * The parties among `candidates` (sorted) whose filter matches `template`, and what they asked
   * for. With `filtersForAnyParty`, every candidate asks.
   */
  match(
    template: TemplateDef,
    candidates: readonly string[],
  ): { parties: string[]; match: FilterMatch } | null {
    const parties: string[] = [];
    let blob = false;
    const views = new Set<InterfaceDef>();
    const anyMatch = this.#anyParty === null ? null : this.#matchers(this.#anyParty, template, '*');
    for (const p of candidates) {
      const own = this.#byParty.get(p);
      const m = own === undefined ? null : this.#matchers(own, template, p);
      if (m === null && anyMatch === null) continue;
      parties.push(p);
      for (const x of [m, anyMatch]) {
        if (x === null) continue;
        blob ||= x.blob;
        for (const v of x.views) views.add(v);
      }
    }
    if (parties.length === 0) return null;
    return { parties, match: { blob, views: [...views] } };
  }

  #matchers(
    matchers: readonly Matcher[],
    template: TemplateDef,
    party: string,
  ): FilterMatch | null {
    const cacheKey = `${party}\u0000${template.templateId}`;
    const hit = this.#cache.get(cacheKey);
    if (hit !== undefined) return hit;
    let matched = false;
    let blob = false;
    const views: InterfaceDef[] = [];
    for (const m of matchers) {
      const ok =
        m.kind === 'wildcard'
          ? true
          : m.kind === 'template'
            ? sameTemplate(m, template)
            : implementsIface(m, template);
      if (!ok) continue;
      matched = true;
      blob ||= m.blob;
      if (m.kind === 'interface' && m.view) views.push(m.iface);
    }
    const result = matched ? { blob, views } : null;
    this.#cache.set(cacheKey, result);
    return result;
  }
}

function notOfKind(id: string): EngineError {
  return {
    code: 'INVALID_ARGUMENT',
    category: 8,
    grpcCode: 3,
    cause: `The submitted request has invalid arguments: ${id} is not of the kind the filter expects (template filters take templates, interface filters take interfaces)`,
  };
}
