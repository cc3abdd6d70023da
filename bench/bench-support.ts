import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

/** What the bench sections share: the sandbox child process, the machine line, docs/benchmarks.md. */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const BENCH_DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
let benchDoc = BENCH_DOC;

/** Where `writeSection` writes: docs/benchmarks.md unless redirected (the smoke run). */
export function setBenchDoc(file: string): void {
  benchDoc = file;
}

export function benchDocPath(): string {
  return benchDoc;
}

let currentCommand = 'npm run bench';
let currentCode: string | undefined;

/**
 * The code a run measures: the commit, and whether src/ had uncommitted changes (the bench
 * builds dist/ from the working tree, and other work may be in it).
 */
export function codeRevision(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT });
    return `commit ${sha.trim()}${dirty.length > 0 ? ' with uncommitted changes in src/' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/** The command (and code) the sections quote; set by bench/run.ts, restored by --rerender. */
export function setBenchCommand(command: string, code?: string): void {
  currentCommand = command;
  currentCode = code;
}

export function benchCommand(): string {
  return currentCommand;
}

/** `Command: … (this section alone: …). Code: …. Source: ….`: what produced the table. */
export function commandLine(only: string, source: string): string {
  const code = (currentCode ??= codeRevision());
  return `Command: \`${currentCommand}\` (this section alone: \`npm run bench -- --only ${only}\`); code: ${code}. Source: ${source}.`;
}

export type SandboxProcess = { readonly url: string; readonly child: ChildProcess };

/**
 * Starts the built CLI's sandbox (`ledgerbot sandbox --port 0 …args`) as its own process and
 * resolves with its URL once it reports ready (20 s at most). The caller kills `child`.
 */
export async function startSandboxProcess(
  args: readonly string[],
  nodeArgs: readonly string[] = [],
): Promise<SandboxProcess> {
  const child = spawn(
    process.execPath,
    [...nodeArgs, 'bin/ledgerbot.js', 'sandbox', '--port', '0', ...args],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('sandbox did not start')), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const m = /sandbox ready (\S+) /.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited with ${String(code)}`)));
  });
  return { url, child };
}

/** `Machine: <cores> × <cpu>; Node <version>; <date>;`, the first line of every section. */
export function machineLine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `Machine: ${cpus().length} × ${cpu}; Node ${process.version}; ${new Date().toISOString().slice(0, 10)};`;
}

/** The line after `machineLine()` in the sections that sample the load average up front. */
export function startLoadLine(load: number): string {
  return `load average ${load.toFixed(2)} when the run started (other work on the machine lowers the numbers).`;
}

function markers(name: string): { readonly start: string; readonly end: string } {
  return { start: `<!-- bench:${name}:start -->`, end: `<!-- bench:${name}:end -->` };
}

/** The lines of section `name` between its markers, as `writeSection` expects them. */
export function benchSection(name: string, lines: readonly string[]): string {
  const { start, end } = markers(name);
  return [start, ...lines, end].join('\n');
}

/**
 * Replaces section `name` of docs/benchmarks.md (the text between its markers, which `section`
 * carries too) and leaves the others, so sections can be added without touching one another.
 */
export function writeSection(name: string, section: string): void {
  const { start, end } = markers(name);
  let doc = existsSync(benchDoc)
    ? readFileSync(benchDoc, 'utf8')
    : '# Benchmarks\n\nProduced by `npm run bench`.\n';
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a >= 0 && b > a) doc = doc.slice(0, a) + section + doc.slice(b + end.length);
  else doc = `${doc.trimEnd()}\n\n${section}\n`;
  writeFileSync(benchDoc, doc.endsWith('\n') ? doc : `${doc}\n`);
}
