// Removes dist/ before `npm run build` writes it again: tsc never deletes the output of a source
// file that was moved or removed, and a package packed from a working tree would ship those stale
// modules (the slow packaging test refuses them).
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
