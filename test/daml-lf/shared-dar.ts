import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import { readDar, type Dar } from '../../src/daml-lf/read-dar.js';
import type { PackageSignature } from '../../src/daml-lf/package-signature.js';
import { SHARED_DIR } from '../support/shared-files.js';
import { renderPackage } from './render-signature.js';

/** A DAR of ../shared/daml-lf/dars (tests that use it skip without ../shared). */
export type SharedDar = {
  readonly dar: Dar;
  /** The package named `name` (its only version in the DAR). */
  readonly pkg: (name: string) => PackageSignature;
  /** `renderPackage` of the package named `name`, references to others by package name. */
  readonly render: (name: string) => string;
  /** The `.daml` sources the DAR carries, by entry name. */
  readonly sources: ReadonlyMap<string, string>;
};

export async function readSharedDar(file: string): Promise<SharedDar> {
  const path = `${SHARED_DIR}daml-lf/dars/${file}`;
  const bytes = readFileSync(path);
  const dar = await readDar(bytes, { source: path });
  const names = new Map(dar.packages.map((p) => [p.packageId, p.signature.name]));
  const pkg = (name: string): PackageSignature => {
    const found = dar.packages.filter((p) => p.signature.name === name);
    if (found.length !== 1) throw new Error(`${file} has ${found.length} packages named ${name}`);
    return found[0]!.signature;
  };
  const sources = new Map<string, string>();
  const entries = unzipSync(bytes, { filter: (f) => f.name.endsWith('.daml') });
  for (const [name, data] of Object.entries(entries)) {
    sources.set(name, new TextDecoder().decode(data));
  }
  return {
    dar,
    pkg,
    render: (name) => renderPackage(pkg(name), (id) => names.get(id)),
    sources,
  };
}

/** A template or interface as a `.daml` source declares it: its choices, and which consume. */
export type DeclaredEntity = {
  readonly kind: 'template' | 'interface';
  readonly choices: ReadonlyMap<string, { readonly consuming: boolean }>;
};

/**
 * The templates and interfaces a `.daml` source declares at the top level, with the choices of
 * each (`choice X` / `nonconsuming choice X`, indented inside the declaration). Enough for the
 * sources of the shared DARs, whose declarations are one per line.
 */
export function declaredIn(source: string): Map<string, DeclaredEntity> {
  const out = new Map<string, DeclaredEntity>();
  let current: Map<string, { consuming: boolean }> | undefined;
  for (const line of source.split('\n')) {
    const top = /^(template|interface)\s+([A-Z]\w*)/.exec(line);
    if (top !== null) {
      current = new Map();
      out.set(top[2]!, { kind: top[1] as 'template' | 'interface', choices: current });
      continue;
    }
    if (/^\S/.test(line) && !line.startsWith('--')) current = undefined;
    const choice = /^\s+(nonconsuming\s+|preconsuming\s+|postconsuming\s+)?choice\s+(\w+)/.exec(
      line,
    );
    if (choice !== null && current !== undefined) {
      current.set(choice[2]!, { consuming: choice[1]?.trim() !== 'nonconsuming' });
    }
  }
  return out;
}

/** What a signature declares, in the shape `declaredIn` gives (the implicit Archive left out). */
export function declaredBy(sig: PackageSignature): Map<string, DeclaredEntity> {
  const out = new Map<string, DeclaredEntity>();
  const choices = (list: readonly { name: string; consuming: boolean }[]) =>
    new Map(
      list.filter((c) => c.name !== 'Archive').map((c) => [c.name, { consuming: c.consuming }]),
    );
  for (const m of sig.modules) {
    for (const t of m.templates) out.set(t.name, { kind: 'template', choices: choices(t.choices) });
    for (const i of m.interfaces)
      out.set(i.name, { kind: 'interface', choices: choices(i.choices) });
  }
  return out;
}
