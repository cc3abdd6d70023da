// Fails when the TypeScript sources under src/ import each other in a cycle. Part of `npm run lint`.
// Uses the compiler's own module resolution, so `./x.js` specifiers resolve to `./x.ts` as tsc does.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const options = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
};
const host = ts.sys;

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? sources(join(dir, d.name))
      : d.name.endsWith('.ts') && !d.name.endsWith('.d.ts')
        ? [join(dir, d.name)]
        : [],
  );
}

const files = sources(join(root, 'src'));
const graph = new Map();
for (const file of files) {
  // Type-only imports vanish at run time, but a type-level cycle still couples the modules, so they count.
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const deps = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const resolved = ts.resolveModuleName(fileName, file, options, host).resolvedModule;
    if (resolved !== undefined && !resolved.isExternalLibraryImport)
      deps.push(resolved.resolvedFileName);
  }
  graph.set(file, deps);
}

// Tarjan's strongly connected components; any component with more than one file is a cycle.
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function visit(v) {
  idx.set(v, index);
  low.set(v, index);
  index++;
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!idx.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const scc = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    const selfLoop = (graph.get(v) ?? []).includes(v);
    if (scc.length > 1 || selfLoop) cycles.push(scc);
  }
}
for (const file of files) if (!idx.has(file)) visit(file);

if (cycles.length > 0) {
  for (const scc of cycles) {
    process.stderr.write(
      `import cycle among:\n${scc.map((f) => `  ${relative(root, f)}`).join('\n')}\n`,
    );
  }
  process.exit(1);
}
process.stdout.write(`no import cycles in ${files.length} files\n`);
