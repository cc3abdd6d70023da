import type { YamlPath } from '../../core/yaml-locator.js';
import type { ModelProblems } from './model-error.js';
import type { ModelLocator } from './model-locator.js';
import type { DamlType, InterfaceDef, TemplateDef } from './model-types.js';
import { formatDamlType } from './parse-daml-type.js';

/**
 * The references a template cannot check alone: exercise steps name choices of other
 * templates, ContractId types name templates or interfaces (`fieldTypes`: when the model
 * declares the fields; a DAR's name other packages' too). Adds a problem for each bad one.
 */
export function checkModelReferences(
  templates: ReadonlyMap<string, TemplateDef>,
  interfaces: ReadonlyMap<string, InterfaceDef>,
  at: ModelLocator,
  problems: ModelProblems,
  fieldTypes: boolean,
): void {
  for (const [qn, t] of templates) {
    for (const [cname, c] of t.choices) {
      c.body.forEach((s, i) => {
        if (s.kind !== 'exercise') return;
        const stepPath = ['templates', qn, 'choices', cname, 'body', i];
        const target = templates.get(s.template);
        if (target === undefined) {
          // An unknown name was reported when the step was compiled.
          if (interfaces.has(s.template)) {
            problems.add(
              at.pos([...stepPath, 'template']),
              `"${s.template}" is an interface: exercising interface choices from a step is not supported; name the template`,
            );
          }
        } else if (!target.choices.has(s.choice)) {
          problems.add(
            at.pos([...stepPath, 'exercise']),
            `template ${s.template} has no choice "${s.choice}" (choices: ${[...target.choices.keys()].join(', ')})`,
          );
        }
      });
    }
    const checkType = (type: DamlType, path: YamlPath): void => {
      if (
        type.kind === 'ContractId' &&
        type.template !== null &&
        !templates.has(type.template) &&
        !interfaces.has(type.template)
      ) {
        problems.add(
          at.pos(path),
          `unknown template "${type.template}" in ${formatDamlType(type)}`,
        );
      }
      if (type.kind === 'Optional' || type.kind === 'List' || type.kind === 'TextMap')
        checkType(type.of, path);
      if (type.kind === 'Record') for (const f of type.fields) checkType(f.type, [...path, f.name]);
    };
    if (fieldTypes)
      for (const f of t.fields) checkType(f.type, ['templates', qn, 'fields', f.name]);
  }
}
