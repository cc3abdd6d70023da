import type { TemplateRef } from './compiled-rule.js';

/**
 * `Module:Entity` of a wire template id (`<package-id>:Module:Entity`, or the package-name form
 * `#name:Module:Entity`): everything after the first colon.
 */
export function qualifiedNameOf(templateId: string): string {
  const colon = templateId.indexOf(':');
  return colon < 0 ? templateId : templateId.slice(colon + 1);
}

/** The package part of a wire template id: a package id, or `#name`. */
export function packageOf(templateId: string): string {
  const colon = templateId.indexOf(':');
  return colon < 0 ? '' : templateId.slice(0, colon);
}

/**
 * Whether an event's template is the one `ref` names, and if not, why.
 * - package-name references compare `packageName` + module + entity, so every version of the
 *   package matches (events carry the package-id form of the template id, plus `packageName`);
 * - package-id references compare the package id of the template id too.
 */
export function templateMismatch(
  ref: TemplateRef,
  templateId: string,
  packageName: string | undefined,
): 'other-template' | 'other-package' | null {
  // Compared in place, without slicing the id: this runs for every rule an event reaches.
  const colon = templateId.indexOf(':');
  const qn = ref.qualifiedName;
  const sameName =
    colon < 0
      ? templateId === qn
      : templateId.length - colon - 1 === qn.length && templateId.endsWith(qn);
  if (!sameName) return 'other-template';
  const pkgEnd = colon < 0 ? 0 : colon;
  if (ref.form === 'package-name') {
    const same =
      colon > 0 && templateId.startsWith('#')
        ? pkgEnd === ref.packageName.length + 1 && templateId.startsWith(ref.packageName, 1)
        : packageName === ref.packageName;
    return same ? null : 'other-package';
  }
  return pkgEnd === ref.packageId.length && templateId.startsWith(ref.packageId)
    ? null
    : 'other-package';
}
