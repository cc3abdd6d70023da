import type { TemplateRef } from './compiled-rule.js';
import { RULE_PATTERNS } from './rule-language.js';

const REF = new RegExp(RULE_PATTERNS.TEMPLATE_REF);

/** Parses `#package-name:Module:Entity` or `<package-id>:Module:Entity`; null when malformed. */
export function parseTemplateRef(text: string): TemplateRef | null {
  if (!REF.test(text)) return null;
  const [pkg, module, entity] = text.split(':') as [string, string, string];
  const qualifiedName = `${module}:${entity}`;
  return pkg.startsWith('#')
    ? { form: 'package-name', text, packageName: pkg.slice(1), module, entity, qualifiedName }
    : { form: 'package-id', text, packageId: pkg, module, entity, qualifiedName };
}
