import type { ArchivedEvent, CreatedEvent, ExercisedEvent } from '../ledger/wire/wire-types.js';
import type { CompiledRule, SourcePos, TemplateRef } from './compiled-rule.js';
import type { Explanation } from './evaluation-result.js';
import { packageOf, qualifiedNameOf } from './match-template.js';

/**
 * Matching events to rules on an interface. Events name interfaces in the package-id form
 * (`<id>:Module:Entity`): a created event in its `interfaceViews` (one per interface the
 * subscription asked for), an archive in `implementedInterfaces`, an exercise through an
 * interface in `interfaceId`. A `#name` reference is matched by the package name the catalogue
 * gives for the id (`packageNameOf`); when it does not know the id (or none is given), by
 * `Module:Entity` alone.
 */

/** One entry of a created event's `interfaceViews` (the spec's InterfaceView). */
export type InterfaceView = NonNullable<CreatedEvent['interfaceViews']>[number];

/** The package id → package name lookup of the catalogue (PackageCatalogue.packageNameOf). */
export type PackageNameOf = (packageId: string) => string | undefined;

type AnyEvent = CreatedEvent | ExercisedEvent | ArchivedEvent;
type EventKind = 'created' | 'exercised' | 'archived';

/** The interface ids an event carries for rules of `kind` (created, exercised or archived). */
export function interfaceIdsOf(
  kind: EventKind,
  event: AnyEvent,
  ruleKind: 'created' | 'exercised' | 'archived',
): readonly string[] {
  if (kind === 'created') {
    return ((event as CreatedEvent).interfaceViews ?? []).map((v) => v.interfaceId);
  }
  if (ruleKind === 'exercised') {
    const id = (event as ExercisedEvent).interfaceId;
    return typeof id === 'string' ? [id] : [];
  }
  return (event as ArchivedEvent | ExercisedEvent).implementedInterfaces ?? [];
}

/** Why `interfaceId` is not the interface `ref` names; null when it is. */
function interfaceIdMismatch(
  ref: TemplateRef,
  interfaceId: string,
  packageNameOf: PackageNameOf | undefined,
): 'other-template' | 'other-package' | null {
  if (qualifiedNameOf(interfaceId) !== ref.qualifiedName) return 'other-template';
  const pkg = packageOf(interfaceId);
  if (ref.form === 'package-id') return pkg === ref.packageId ? null : 'other-package';
  const name = pkg.startsWith('#') ? pkg.slice(1) : packageNameOf?.(pkg);
  return name === undefined || name === ref.packageName ? null : 'other-package';
}

/**
 * The first of `ids` that is the interface `ref` names, or why none is: 'other-package' when one
 * has its `Module:Entity` but another package.
 */
export function findInterface(
  ref: TemplateRef,
  ids: readonly string[],
  packageNameOf: PackageNameOf | undefined,
): { readonly id: string } | { readonly mismatch: 'other-template' | 'other-package' } {
  let mismatch: 'other-template' | 'other-package' = 'other-template';
  for (const id of ids) {
    const m = interfaceIdMismatch(ref, id, packageNameOf);
    if (m === null) return { id };
    if (m === 'other-package') mismatch = m;
  }
  return { mismatch };
}

/** The message of an interface rule's mismatch, for explanations. */
export function interfaceMismatchMessage(
  ref: TemplateRef,
  mismatch: 'other-template' | 'other-package',
  kind: EventKind,
  templateId: string,
  ids: readonly string[],
): string {
  const where =
    kind === 'created'
      ? `its interface views are for ${ids.join(', ') || 'no interface'}`
      : kind === 'archived'
        ? `it implements ${ids.join(', ') || 'no interface'}`
        : ids.length === 0
          ? 'it was not exercised through an interface'
          : `it was exercised through ${ids.join(', ')}`;
  return mismatch === 'other-package'
    ? `the event's interface ${ref.qualifiedName} is from another package than ${ref.text} (${where})`
    : `the event (template ${templateId}) is not of the interface ${ref.text}: ${where}`;
}

/**
 * The value of the view of `interfaceId` in a created event's (or active contract's) interface
 * views; `failed` says why there is none: the participant could not compute it (`viewStatus`
 * not OK), or it was not asked for.
 */
export function viewValueOf(
  event: CreatedEvent,
  interfaceId: string,
): { readonly value: unknown } | { readonly failed: string } {
  const view = (event.interfaceViews ?? []).find((v) => v.interfaceId === interfaceId);
  const status = view?.viewStatus as { code?: number; message?: string } | undefined;
  if (view !== undefined && status !== undefined && (status.code ?? 0) !== 0) {
    const failed = `the participant could not compute the interface view of ${qualifiedNameOf(interfaceId)} (status ${status.code}): ${status.message ?? ''}`;
    return { failed: failed.trimEnd() };
  }
  if (view?.viewValue === undefined) {
    return {
      failed: `the event has no interface view of ${qualifiedNameOf(interfaceId)}: the subscription did not ask for it (an InterfaceFilter with includeInterfaceView)`,
    };
  }
  return { value: view.viewValue };
}

/** The explanation of a matched interface rule whose view failed: a rule error, no intents. */
export function viewFailure(
  rule: CompiledRule,
  message: string,
  contractId: string | null,
  pos: SourcePos,
): Explanation {
  return {
    ruleId: rule.id,
    revision: rule.revision,
    pos: rule.pos,
    triggerMatched: true,
    mismatch: null,
    conditions: rule.when.map((c) => ({
      index: c.index,
      source: c.source,
      pos: c.pos,
      outcome: 'skipped' as const,
    })),
    fired: false,
    intents: 0,
    error: {
      ruleId: rule.id,
      revision: rule.revision,
      code: 'INTERFACE_VIEW_FAILED',
      message,
      expression: null,
      pos,
      phase: 'when',
      actionIndex: null,
    },
    contractId,
  };
}
