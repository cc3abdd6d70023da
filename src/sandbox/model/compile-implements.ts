import type { YamlPath } from '../../core/yaml-locator.js';
import { compileChoice, type ChoiceContext } from './compile-choice.js';
import { unimplementedChoice, type DarDefinitions } from './dar-definitions.js';
import type {
  ChoiceDef,
  FieldDef,
  InterfaceDef,
  InterfaceInstanceDef,
  TemplateDef,
} from './model-types.js';
import type { RawInstance } from './raw-model.js';

/** What compiling a template needs besides what its choices need. */
export type TemplateContext = ChoiceContext & {
  /** The package's id; '' for a model's own package, whose id is known once it is compiled. */
  readonly packageId: string;
  readonly packageName: string;
  /** The DARs' (and earlier models') packages: other packages' interfaces, a DAR's templates. */
  readonly dar: DarDefinitions;
  /** The package's own interfaces, by `Module:Entity`. */
  readonly interfaces: ReadonlyMap<string, InterfaceDef>;
};

const REF = /^#([^:]+):(.+):([^:]+)$/;

/**
 * The interface an `implements` key names: `Module:Interface` of this package, or
 * `#package-name:Module:Interface` of another package loaded before this model (a DAR's, or
 * another model's); the newest version when several are loaded. Adds a problem when there is
 * none.
 */
function resolveInterface(
  ctx: TemplateContext,
  text: string,
  path: YamlPath,
): InterfaceDef | undefined {
  const pos = ctx.at.pos(path, { key: true });
  const m = REF.exec(text);
  const own = m === null || m[1] === ctx.packageName;
  const qualified = m === null ? text : `${m[2]}:${m[3]}`;
  if (own) {
    const def = ctx.interfaces.get(qualified);
    if (def === undefined) {
      ctx.problems.add(
        pos,
        `unknown interface "${text}": declare it under "interfaces", or name another package's as #package-name:Module:Interface (this package's: ${[...ctx.interfaces.keys()].join(', ') || 'none'})`,
      );
    }
    return def;
  }
  const [, packageName, module, entity] = m as unknown as [string, string, string, string];
  const catalogue = ctx.dar.catalogue;
  if (catalogue.packagesNamed(packageName).length === 0) {
    ctx.problems.add(
      pos,
      `unknown package "${packageName}": load the DAR or the model that declares it before this model (ledgerbot sandbox --dar FILE, or its --model first)`,
    );
    return undefined;
  }
  const entries = catalogue.entries({ form: 'package-name', packageName, module, entity });
  const entry = entries[0];
  if (entry?.kind !== 'interface') {
    const known = catalogue
      .packagesNamed(packageName)[0]!
      .modules.flatMap((mod) => mod.interfaces.map((i) => `${mod.name}:${i.name}`));
    ctx.problems.add(
      pos,
      entry === undefined
        ? `package "${packageName}" has no interface ${qualified} (its interfaces: ${known.join(', ') || 'none'})`
        : `${qualified} of package "${packageName}" is a template, not an interface`,
    );
    return undefined;
  }
  return ctx.dar.interfaceDef(entry.ref);
}

/**
 * A template's implementation of `iface`: the view computed from `this`, and what each of the
 * interface's choices does on this template (from `raw.choices`; a choice left out is not
 * implemented and fails when exercised). The choices' types are the interface's.
 */
function compileInstance(
  ctx: TemplateContext,
  iface: InterfaceDef,
  ref: string,
  raw: RawInstance,
  path: YamlPath,
  template: { readonly fields: readonly FieldDef[]; readonly archive: ChoiceDef },
): InterfaceInstanceDef {
  const view = ctx.exprs.value(raw.view, [...path, 'view'], ['this']);
  const choices = new Map<string, ChoiceDef>();
  for (const name of Object.keys(raw.choices ?? {})) {
    if (name === 'Archive') {
      ctx.problems.add(
        ctx.at.pos([...path, 'choices', name], { key: true }),
        "an interface's Archive is the template's own Archive (by its signatories); it takes no behaviour here",
      );
    } else if (!iface.choices.has(name)) {
      ctx.problems.add(
        ctx.at.pos([...path, 'choices', name], { key: true }),
        `interface ${ref} has no choice "${name}" (its choices: ${[...iface.choices.keys()].join(', ') || 'none'})`,
      );
    }
  }
  for (const c of iface.choices.values()) {
    const behaviour = c.name === 'Archive' ? undefined : raw.choices?.[c.name];
    choices.set(
      c.name,
      c.name === 'Archive'
        ? template.archive
        : behaviour === undefined
          ? unimplementedChoice(c.name, c)
          : compileChoice(ctx, c.name, behaviour, c, [...path, 'choices', c.name], template.fields),
    );
  }
  return { interface: iface, view, choices };
}

/**
 * The `implements` of a template: each entry resolved and compiled. `base`: the DAR's template
 * a model describes; its interfaces are the only ones it may implement, and those the model
 * says nothing of stay without a view.
 */
export function compileImplements(
  ctx: TemplateContext,
  raw: Readonly<Record<string, RawInstance>>,
  path: YamlPath,
  template: { readonly fields: readonly FieldDef[]; readonly archive: ChoiceDef },
  base: TemplateDef | null,
): Map<string, InterfaceInstanceDef> {
  const out = new Map<string, InterfaceInstanceDef>(base?.implements ?? []);
  const seen = new Set<string>();
  for (const [ref, instance] of Object.entries(raw)) {
    const iface = resolveInterface(ctx, ref, [...path, ref]);
    if (iface === undefined) continue;
    if (base !== null && !base.implements.has(iface.interfaceId)) {
      const known = [...base.implements.values()].map(
        (i) => `#${i.interface.packageName}:${i.interface.qualifiedName}`,
      );
      ctx.problems.add(
        ctx.at.pos([...path, ref], { key: true }),
        `the DAR's template ${base.qualifiedName} does not implement ${ref} (it implements: ${known.join(', ') || 'no interface'})`,
      );
      continue;
    }
    if (seen.has(iface.interfaceId)) {
      ctx.problems.add(
        ctx.at.pos([...path, ref], { key: true }),
        `${ref} names an interface already implemented above`,
      );
      continue;
    }
    seen.add(iface.interfaceId);
    out.set(
      iface.interfaceId,
      compileInstance(ctx, iface, ref, instance, [...path, ref], template),
    );
  }
  return out;
}
