import { appendFile, lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULTS } from '../../core/defaults.js';
import { LedgerbotError } from '../../core/ledgerbot-error.js';
import { defineCommand } from '../define-command.js';
import type { CliIo } from '../cli-io.js';
import {
  ACTING_PARTY_ENV,
  TOKEN_ENV,
  botConfigText,
  requiredEnv,
  type InitLedger,
} from './init-config-file.js';
import { partyOptions, urlOption } from './init-options.js';
import {
  EXAMPLE_ACTING_ALIAS,
  GITIGNORE_ENTRY,
  STARTER_PATHS,
  STATE_DIR,
  exampleRuleText,
  exampleTestText,
  gitignoreText,
  starterModelText,
} from './init-starter-files.js';
import { UsageError } from '../usage-error.js';

/** The participant URL when neither --url nor --embedded is given: a local JSON Ledger API. */
const DEFAULT_URL = `http://127.0.0.1:${DEFAULTS.cli.sandboxPort}`;

/** The project files exist and --force was not given; `files` are relative to the directory. */
export class ExistingFilesError extends UsageError {
  readonly files: readonly string[];

  constructor(dir: string, files: readonly string[]) {
    super(
      `${dir} already has ${files.join(', ')}; nothing was written. Pass --force to overwrite ${files.length === 1 ? 'it' : 'them'}, or choose another directory`,
    );
    this.files = files;
  }
}

/** The rule schema shipped with ledgerbot cannot be read: a broken installation (exit 1). */
export class InitSchemaError extends LedgerbotError {
  constructor(path: string, options: { cause: unknown }) {
    super('INIT_SCHEMA_MISSING', `cannot read ledgerbot's schema ${path}`, options);
  }
}

/** One file to write: its path relative to the project directory, and what it is for. */
type ProjectFile = { readonly path: string; readonly text: string; readonly what: string };

export const initCommand = defineCommand({
  name: 'init',
  summary: 'start a project: a commented config, an example rule and its tests',
  usage: `init [DIR] [--embedded | --url URL [--party alias=id]...] [--force]`,
  description: `Starts a ledgerbot project in DIR (default: the current directory; created if missing):
bot.config.yaml, an example rule in rules/, its unit tests in tests/, the schemas for
editors in schema/, and a .gitignore entry for the state directory (.state/). Then:
  ledgerbot validate --config DIR/bot.config.yaml && ledgerbot test DIR/tests`,
  options: {
    embedded: {
      type: 'boolean',
      help: 'run against an embedded sandbox (no Canton needed): writes\nmodels/starter.yaml, a small ledger the example rule fires on',
    },
    url: {
      type: 'string',
      value: 'URL',
      help: `the participant's JSON Ledger API (default ${DEFAULT_URL}); the\ntoken is read from the environment variable ${TOKEN_ENV}`,
    },
    party: {
      type: 'string',
      multiple: true,
      value: 'alias=id',
      help: `a party alias for the rules and its party id (repeatable); the example\nrule acts as \`${EXAMPLE_ACTING_ALIAS}\` (without it, ${ACTING_PARTY_ENV} is read)`,
    },
    force: { type: 'boolean', help: 'overwrite files that exist' },
  },
  positionals: true,
  footer: `Exit status: 0 when the files are written, 2 for a bad flag or when a file exists (nothing is
written then; every existing file is named).`,
  run: async ({ values, positionals }, io) => {
    if (positionals.length > 1) {
      throw new UsageError(
        `init takes one directory, not ${positionals.length}: ${positionals.join(' ')}`,
      );
    }
    const embedded = values.embedded === true;
    const partyFlags = values.party ?? [];
    if (embedded && (values.url !== undefined || partyFlags.length > 0)) {
      // The embedded sandbox allocates its own parties and has its own URL.
      throw new UsageError(
        '--embedded starts a sandbox that allocates its own parties: leave out --url and --party (they are for a participant)',
      );
    }
    const ledger: InitLedger = embedded
      ? { kind: 'embedded' }
      : {
          kind: 'url',
          url: values.url === undefined ? DEFAULT_URL : urlOption(values.url),
          parties: partyOptions(partyFlags),
        };
    const shown = positionals[0] ?? '.';
    const dir = resolve(shown);
    const files = [...projectFiles(ledger), ...(await schemaFiles())];

    await checkDirectory(dir, shown);
    const existing = await existingFiles(dir, files);
    if (existing.length > 0 && values.force !== true) throw new ExistingFilesError(shown, existing);
    for (const path of existing) {
      if ((await lstat(join(dir, path))).isDirectory()) {
        throw new UsageError(`${join(shown, path)} is a directory; --force only replaces files`);
      }
    }

    const created: string[] = [];
    let gitignore;
    try {
      for (const file of files) {
        const target = join(dir, file.path);
        await mkdir(dirname(target), { recursive: true });
        const isNew = !existing.includes(file.path);
        // 'wx' fails if the file appeared since the check: it is still never overwritten.
        await writeFile(target, file.text, { flag: values.force === true ? 'w' : 'wx' });
        if (isNew) created.push(target);
      }
      gitignore = await writeGitignore(dir);
    } catch (error) {
      // No half-made project: the files this run created go again (a --force overwrite stays).
      await Promise.all(created.map((path) => rm(path, { force: true })));
      throw new UsageError(
        `cannot write the project into ${shown}: ${fsReason(error, dir, shown)} (the files it had written are removed)`,
        { cause: error },
      );
    }
    report(io, shown, files, gitignore, ledger);
    return 0;
  },
});

function projectFiles(ledger: InitLedger): ProjectFile[] {
  return [
    { path: STARTER_PATHS.config, text: botConfigText(ledger), what: "the bot's configuration" },
    { path: STARTER_PATHS.rule, text: exampleRuleText(), what: 'an example rule' },
    { path: STARTER_PATHS.test, text: exampleTestText(), what: 'its unit tests' },
    ...(ledger.kind === 'embedded'
      ? [
          {
            path: STARTER_PATHS.model,
            text: starterModelText(),
            what: "the sandbox's ledger model",
          },
        ]
      : []),
  ];
}

/**
 * Copies of the schemas this ledgerbot ships (rules, rule tests, the config), for the `$schema`
 * lines of the files init writes: the package's own copies are not inside the project when
 * ledgerbot runs through npx or globally.
 */
async function schemaFiles(): Promise<ProjectFile[]> {
  const schemas = [
    [STARTER_PATHS.schema, 'the rule schema, for editors'],
    [STARTER_PATHS.testSchema, 'the rule test schema, for editors'],
    [STARTER_PATHS.configSchema, 'the config schema, for editors'],
  ] as const;
  return Promise.all(
    schemas.map(async ([path, what]) => {
      // dist/cli/ and src/cli/ are both two levels below the package root, where schema/ is.
      const url = new URL(`../../../${path}`, import.meta.url);
      try {
        return { path, text: await readFile(url, 'utf8'), what };
      } catch (error) {
        throw new InitSchemaError(url.pathname, { cause: error });
      }
    }),
  );
}

async function checkDirectory(dir: string, shown: string): Promise<void> {
  const stats = await lstat(dir).catch((error: unknown) => {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot use ${shown}: ${fsReason(error, dir, shown)}`, { cause: error });
  });
  if (stats !== undefined && !stats.isDirectory()) {
    throw new UsageError(
      `${shown} exists and is not a directory; name a new or existing directory`,
    );
  }
}

/**
 * What a file system error says, in words, without Node's call details: the path it names shown
 * as the user wrote the directory (`shown` for `dir`).
 */
function fsReason(error: unknown, dir: string, shown: string): string {
  const { code, path } = error as NodeJS.ErrnoException;
  const where = path === undefined ? shown : join(shown, relative(dir, path));
  switch (code) {
    case 'ENOTDIR':
      return `a part of ${where} is a file, not a directory`;
    case 'EEXIST':
      return `${where} is already there, and is not what init would write there`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied for ${where}`;
    case 'EROFS':
      return `${where} is on a read-only file system`;
    case 'ENOSPC':
      return 'no space left on the device';
    default:
      return (error as Error).message;
  }
}

/** The files (relative paths) that exist already, in the order they would be written. */
async function existingFiles(dir: string, files: readonly ProjectFile[]): Promise<string[]> {
  const existing: string[] = [];
  for (const file of files) {
    const exists = await lstat(join(dir, file.path)).then(
      () => true,
      () => false,
    );
    if (exists) existing.push(file.path);
  }
  return existing;
}

/**
 * Writes .gitignore, or adds the state directory to an existing one: a project's .gitignore
 * has other people's entries, so it is extended, never replaced (and never a conflict).
 */
async function writeGitignore(dir: string): Promise<'written' | 'extended' | 'unchanged'> {
  const path = join(dir, STARTER_PATHS.gitignore);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    await writeFile(path, gitignoreText(), { flag: 'wx' });
    return 'written';
  }
  const entries = new Set([STATE_DIR, `${STATE_DIR}/`, `/${STATE_DIR}`, `/${STATE_DIR}/`]);
  if (text.split(/\r?\n/).some((line) => entries.has(line.trim()))) return 'unchanged';
  const separator = text === '' || text.endsWith('\n') ? '' : '\n';
  await appendFile(path, `${separator}# ledgerbot's state directory\n${GITIGNORE_ENTRY}\n`);
  return 'extended';
}

/**
 * How the project's directory can run ledgerbot: `npx ledgerbot` where npx finds it (installed in
 * the project or an enclosing one, or on the PATH); else this installation's own entry point (run
 * from a clone, `npx ledgerbot` would look for the package on the registry).
 */
function commandFor(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules', '.bin', 'ledgerbot'))) return 'npx ledgerbot';
    if (dirname(d) === d) break;
  }
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .some((p) => p !== '' && existsSync(join(p, 'ledgerbot')));
  if (onPath) return 'npx ledgerbot';
  return `node ${fileURLToPath(new URL('../../../bin/ledgerbot.js', import.meta.url))}`;
}

function report(
  io: CliIo,
  shown: string,
  files: readonly ProjectFile[],
  gitignore: 'written' | 'extended' | 'unchanged',
  ledger: InitLedger,
): void {
  const rows: [string, string][] = files.map((f) => [f.path, f.what]);
  if (gitignore !== 'unchanged') {
    rows.push([
      STARTER_PATHS.gitignore,
      `${gitignore === 'extended' ? 'now also keeps' : 'keeps'} the state directory (${GITIGNORE_ENTRY}) out of git`,
    ]);
  }
  const width = Math.max(...rows.map(([path]) => path.length));
  const lines = [`Wrote a ledgerbot project in ${shown}:`];
  for (const [path, what] of rows) lines.push(`  ${path.padEnd(width)}  ${what}`);
  lines.push('', 'Next:');
  if (shown !== '.') lines.push(`  cd ${shown}`);
  for (const name of requiredEnv(ledger)) lines.push(`  export ${name}=...`);
  const ledgerbot = commandFor(resolve(shown));
  lines.push(
    `  ${ledgerbot} validate --config bot.config.yaml`,
    `  ${ledgerbot} test tests`,
    `  ${ledgerbot} run --config bot.config.yaml`,
  );
  if (ledger.kind === 'url' && !ledger.parties.some(([alias]) => alias === EXAMPLE_ACTING_ALIAS)) {
    lines.push(
      '',
      `The example rule acts as \`${EXAMPLE_ACTING_ALIAS}\`; no --party named it, so the config reads its party id from ${ACTING_PARTY_ENV}.`,
    );
  }
  io.out(`${lines.join('\n')}\n`);
}
