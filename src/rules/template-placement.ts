import { isMap, isScalar, isSeq, type Node } from 'yaml';
import type { YamlPath } from '../core/yaml-locator.js';
import { COMMAND_KINDS } from './rule-language.js';
import { hasTemplate } from './split-template.js';

/** Where `${{ }}` may appear: the arguments and workflowId/disclosedContracts of an action. */
const TEMPLATE_FIELDS = new Set(['createArguments', 'choiceArgument', 'contractId', 'contractKey']);

/**
 * Every string of a rule file's document that holds `${{` where no template may be, with its
 * path: rules are checked before they run, so only values of the command may vary per event.
 */
export function misplacedTemplates(root: unknown): { path: YamlPath; node: Node }[] {
  return templateStrings(root).filter(({ path }) => !templateAllowed(path));
}

function templateAllowed(path: YamlPath): boolean {
  if (path[0] !== 'rules' || path[2] !== 'then' || typeof path[3] !== 'number') return false;
  const field = path[4];
  if (field === 'workflowId' || field === 'disclosedContracts') return true;
  return (
    typeof field === 'string' &&
    (COMMAND_KINDS as readonly string[]).includes(field) &&
    typeof path[5] === 'string' &&
    TEMPLATE_FIELDS.has(path[5])
  );
}

/** Every string scalar holding `${{`, with its path; walks iteratively (input is untrusted). */
function templateStrings(root: unknown): { path: YamlPath; node: Node }[] {
  const found: { path: YamlPath; node: Node }[] = [];
  const stack: { node: unknown; path: YamlPath }[] = [{ node: root, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (isScalar(node)) {
      if (typeof node.value === 'string' && hasTemplate(node.value)) found.push({ path, node });
    } else if (isMap(node)) {
      for (const pair of node.items) {
        if (isScalar(pair.key))
          stack.push({ node: pair.value, path: [...path, String(pair.key.value)] });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => stack.push({ node: item, path: [...path, i] }));
    }
  }
  return found.reverse();
}
