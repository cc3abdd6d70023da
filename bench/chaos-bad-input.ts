import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SQLITE_STORE_FILE } from '../src/store/open-sqlite-store.js';
import type { ChaosLedger } from './chaos-ledger.js';

/**
 * The bad-input section of the chaos run: hostile rule files (test/fixtures/rules/hostile/) and
 * hostile bot configs, each given to `ledgerbot run --config …` pointed at the live sandbox. Each
 * must be refused with exit code 2 and a located message, leak no secret, and submit nothing.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const HOSTILE_RULES = join(ROOT, 'test/fixtures/rules/hostile');
const VALID_RULE = join(ROOT, 'test/fixtures/rules/valid/accept-small-invoices.yaml');
const SECRET = 'hunter2-SECRET';
const BAD_INPUT_USER = 'bad-input';

export type BadInputCase = {
  readonly name: string;
  /** Where the input comes from, as the doc shows it. */
  readonly source: string;
  readonly exitCode: number | null;
  /** The error text, with the temporary directory shortened to `…/`. */
  readonly error: string;
  readonly secretEchoed: boolean;
  /**
   * The store's file exists afterwards (the bot got as far as opening its store). The state
   * directory alone does not count: the participant's package cache may be written there by
   * the rule check, which reads the participant's packages when it answers.
   */
  readonly storeOpened: boolean;
  readonly ms: number;
};

export type BadInputResult = {
  readonly cases: readonly BadInputCase[];
  readonly ledgerEndBefore: number;
  readonly ledgerEndAfter: number;
};

type ConfigCase = {
  readonly name: string;
  readonly source: string;
  readonly text: (base: string) => string;
  readonly env?: Readonly<Record<string, string>>;
  /** The case writes its own `parties:` (else the real ones are added). */
  readonly ownParties?: boolean;
};

const aliasBomb = [
  '  payer: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  '  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
  '  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
  '  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
  '  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  '  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
  '  g: [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
].join('\n');

// The config cases mirror the hostile inputs of test/runtime/config/load-bot-config.test.ts, as
// files an operator could be handed; ${…} values come from the child's environment.
const CONFIG_CASES: readonly ConfigCase[] = [
  {
    name: 'config: billion laughs',
    source: 'alias bomb under `parties`',
    text: (b) => `${b}parties:\n${aliasBomb}\n`,
    ownParties: true,
  },
  {
    name: 'config: 100,000 nested brackets',
    source: '`parties: [[[…]]]`',
    text: (b) => `${b}parties: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
    ownParties: true,
  },
  {
    name: 'config: secret in a number field',
    source: '`http.port: ${PORT}`, PORT a secret',
    text: (b) => `${b}http:\n  port: \${PORT}\n`,
    env: { PORT: SECRET },
  },
  {
    name: 'config: secret in a YAML syntax error',
    source: '`auth: {token: <secret>: x}`',
    text: (b) => b.replace(/^( {2}userId: .*\n)/m, `$1  auth: {token: ${SECRET}: x}\n`),
  },
  {
    name: 'config: credentials in the URL',
    source: '`ledger.url: ${URL}`, URL with a password',
    text: (b) => b.replace(/url: .*/, 'url: ${URL}'),
    env: { URL: `http://u:${SECRET}@127.0.0.1:1` },
  },
  {
    name: 'config: a key from the environment',
    source: '`${KEY}: 1`, KEY=log',
    text: (b) => `${b}\${KEY}: 1\n`,
    env: { KEY: 'log' },
  },
  {
    name: 'config: unset variable',
    source: '`payer: "Payer::${PAYER_ID}"`',
    text: (b) => `${b}parties:\n  payer: "Payer::\${PAYER_ID}"\n`,
    ownParties: true,
  },
];

// `start: begin`: a bot that accepted its input would act on every invoice already on the ledger,
// so an unchanged ledger end shows that none did.
function baseConfig(l: ChaosLedger, rulesDir: string, stateDir: string, parties: boolean): string {
  return [
    'ledger:',
    `  url: ${l.url}`,
    `  userId: ${BAD_INPUT_USER}`,
    `rules: ['${rulesDir}']`,
    `state: { dir: '${stateDir}' }`,
    'start: begin',
    ...(parties ? ['parties:', `  payer: '${l.payer}'`, `  issuer: '${l.issuer}'`] : []),
    '',
  ].join('\n');
}

async function runBot(
  configPath: string,
  env: Readonly<Record<string, string>>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['bin/ledgerbot.js', 'run', '--config', configPath], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  // A bot that accepted the input would run until stopped: that is a failure, and this bounds it.
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  return { code, output, ms: performance.now() - started };
}

function shorten(text: string, dir: string): string {
  return text.trim().split(dir).join('…').replace(/\n\s*/g, ' / ');
}

export async function runBadInput(l: ChaosLedger, dir: string): Promise<BadInputResult> {
  mkdirSync(dir, { recursive: true });
  const ledgerEndBefore = await l.ledgerEnd();
  const run = async (
    name: string,
    source: string,
    caseDir: string,
    config: string,
    env: Readonly<Record<string, string>> = {},
  ): Promise<BadInputCase> => {
    const configPath = join(caseDir, 'bot.config.yaml');
    writeFileSync(configPath, config);
    const r = await runBot(configPath, env, 20_000);
    return {
      name,
      source,
      exitCode: r.code,
      error: shorten(r.output, dir),
      secretEchoed: r.output.includes(SECRET) || r.output.includes('hunter2'),
      storeOpened: existsSync(join(caseDir, 'state', SQLITE_STORE_FILE)),
      ms: r.ms,
    };
  };
  type Job = () => Promise<BadInputCase>;
  const jobs: Job[] = [];
  const files = readdirSync(HOSTILE_RULES)
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  for (const file of files) {
    const caseDir = join(dir, `rules-${file.replace(/\.yaml$/, '')}`);
    const rulesDir = join(caseDir, 'rules');
    mkdirSync(rulesDir, { recursive: true });
    copyFileSync(join(HOSTILE_RULES, file), join(rulesDir, file));
    const config = baseConfig(l, rulesDir, join(caseDir, 'state'), true);
    jobs.push(() => run(`rules: ${file}`, `test/fixtures/rules/hostile/${file}`, caseDir, config));
  }
  for (const [k, c] of CONFIG_CASES.entries()) {
    const caseDir = join(dir, `config-${k + 1}`);
    const rulesDir = join(caseDir, 'rules');
    mkdirSync(rulesDir, { recursive: true });
    copyFileSync(VALID_RULE, join(rulesDir, 'accept-small-invoices.yaml'));
    const base = baseConfig(l, rulesDir, join(caseDir, 'state'), c.ownParties !== true);
    jobs.push(() => run(c.name, c.source, caseDir, c.text(base), { ...c.env }));
  }
  // Two at a time (the machine has two cores); the table keeps the order of the list.
  const cases: BadInputCase[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let k = next++; k < jobs.length; k = next++) cases[k] = await jobs[k]!();
  };
  await Promise.all([worker(), worker()]);
  return { cases, ledgerEndBefore, ledgerEndAfter: await l.ledgerEnd() };
}

/** The cases that did not end as they must: exit 2, a located error, no secret, no store opened. */
export function badInputFailures(r: BadInputResult): string[] {
  const out: string[] = [];
  for (const c of r.cases) {
    if (c.exitCode !== 2) out.push(`${c.name}: exit code ${String(c.exitCode)}, not 2`);
    if (!/\.yaml:\d+:\d+/.test(c.error)) out.push(`${c.name}: the error names no file:line:col`);
    if (c.secretEchoed) out.push(`${c.name}: the error text shows the secret`);
    if (c.storeOpened) out.push(`${c.name}: the bot opened its store`);
  }
  if (r.ledgerEndAfter !== r.ledgerEndBefore) {
    out.push(
      `the ledger moved during the bad-input runs (${r.ledgerEndBefore} → ${r.ledgerEndAfter})`,
    );
  }
  return out;
}
