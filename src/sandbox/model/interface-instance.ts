import type { InterfaceDef, InterfaceInstanceDef, TemplateDef } from './model-types.js';

/**
 * A template's implementation of `iface`: by the interface's id, or, `byName`, of an interface
 * with the same package name and `Module:Entity` (another version of its package: what a
 * `#package-name` reference means).
 */
export function interfaceInstance(
  template: TemplateDef,
  iface: InterfaceDef,
  byName: boolean,
): InterfaceInstanceDef | undefined {
  const exact = template.implements.get(iface.interfaceId);
  if (exact !== undefined || !byName) return exact;
  for (const instance of template.implements.values()) {
    if (
      instance.interface.packageName === iface.packageName &&
      instance.interface.qualifiedName === iface.qualifiedName
    ) {
      return instance;
    }
  }
  return undefined;
}
