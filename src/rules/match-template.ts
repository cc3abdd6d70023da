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
  if (qualifiedNameOf(templateId) !== ref.qualifiedName) return 'other-template';
  const pkg = packageOf(templateId);
  if (ref.form === 'package-name') {
    const name = pkg.startsWith('#') ? pkg.slice(1) : packageName;
    return name === ref.packageName ? null : 'other-package';
  }
  return pkg === ref.packageId ? null : 'other-package';
}
