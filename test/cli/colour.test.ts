import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { cli, type CliResult } from '../support/cli-capture.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import {
  ANSI_COLOUR,
  colourFor,
  NO_COLOUR,
  paintProblems,
  stripColour,
} from '../../src/cli/present/colour.js';
import { DemoAccount } from '../../src/cli/commands/demo-report.js';
import { paintState } from '../../src/cli/present/demo-summary.js';
import type { LedgerClient } from '../../src/ledger/ledger-client.js';
import type { IntentEvent } from '../../src/runtime/submission-tracker.js';

const ESC = '\u001b[';
const tmp = mkdtempSync(join(tmpdir(), 'ledgerbot-colour-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

const tty = (isTTY?: boolean): CliIo => ({
  out: () => undefined,
  err: () => undefined,
  ...(isTTY === undefined ? {} : { isTTY }),
});

describe('colourFor', () => {
  it('is on for a terminal only, and off with --no-color or a non-empty NO_COLOR', () => {
    expect(colourFor(tty(true), false, {}).enabled).toBe(true);
    expect(colourFor(tty(true), undefined, { NO_COLOR: '' }).enabled).toBe(true);
    expect(colourFor(tty(true), true, {}).enabled).toBe(false);
    expect(colourFor(tty(true), false, { NO_COLOR: '1' }).enabled).toBe(false);
    expect(colourFor(tty(false), false, {}).enabled).toBe(false);
    expect(colourFor(tty(), false, {}).enabled).toBe(false);
  });

  it('paints and strips', () => {
    expect(ANSI_COLOUR.red('x')).toBe(`${ESC}31mx${ESC}39m`);
    expect(ANSI_COLOUR.bold('x')).toBe(`${ESC}1mx${ESC}22m`);
    expect(ANSI_COLOUR.green('')).toBe('');
    expect(NO_COLOUR.red('x')).toBe('x');
    expect(stripColour(ANSI_COLOUR.cyan(ANSI_COLOUR.dim('a')))).toBe('a');
  });

  it('paints file:line:col problems: location, error or warning, hint', () => {
    const text = 'r.yaml:3:5: unknown key "x"\n    hint: did you mean "y"?';
    expect(paintProblems(text, NO_COLOUR)).toBe(text);
    expect(paintProblems(text, ANSI_COLOUR)).toBe(
      `${ESC}36mr.yaml:3:5:${ESC}39m${ESC}31m unknown key "x"${ESC}39m\n    ${ESC}2mhint: did you mean "y"?${ESC}22m`,
    );
    expect(paintProblems('r.yaml:1:1: warning: w', ANSI_COLOUR)).toBe(
      `${ESC}36mr.yaml:1:1:${ESC}39m${ESC}33m warning:${ESC}39m w`,
    );
  });
});

function validate(args: string[], isTTY?: boolean): Promise<CliResult> {
  return cli(['validate', ...args], isTTY === undefined ? {} : { isTTY });
}

describe('ledgerbot validate in colour', () => {
  const bad = join(tmp, 'bad.yaml');
  writeFileSync(bad, 'version: 1\nrules:\n  - id: Bad Id\n');
  const good = new URL('../../examples/invoices/rules/', import.meta.url).pathname;

  it('on a terminal: the location cyan, the error red, the summary red or green', async () => {
    vi.stubEnv('NO_COLOR', '');
    const r = await validate([bad], true);
    expect(r.out).toContain(`${ESC}36m${bad}:3:`);
    expect(r.out).toMatch(new RegExp(`${bad}:3:\\d+:\\u001b\\[39m\\u001b\\[31m `));
    expect(r.out).toContain(`${ESC}31m3 error(s)${ESC}39m`);
    expect(r.code).toBe(2);
    const ok = await validate([good], true);
    expect(ok.out).toContain(`${ESC}32mvalid${ESC}39m`);
    expect(ok.code).toBe(0);
  });

  it('plain with --no-color, NO_COLOR, or no terminal; the text is the same', async () => {
    vi.stubEnv('NO_COLOR', '');
    const coloured = await validate([bad], true);
    const plain = await validate(['--no-color', bad], true);
    expect(plain.out).not.toContain(ESC);
    expect(plain.out).toBe(stripColour(coloured.out));
    expect((await validate([bad], false)).out).not.toContain(ESC);
    vi.stubEnv('NO_COLOR', 'yes');
    expect((await validate([bad], true)).out).not.toContain(ESC);
  });
});

describe('the demo table in colour', () => {
  const event = (to: IntentEvent['to'], code?: string): IntentEvent =>
    ({
      commandId: 'lb-x',
      ruleId: 'accept-small-invoices',
      from: 'submitted',
      to,
      record: { payload: 'not a payload' },
      ...(code === undefined ? {} : { error: { code } }),
    }) as unknown as IntentEvent;
  const client = {} as LedgerClient;

  it('colours the result column only, so the columns stay aligned', async () => {
    const coloured = new DemoAccount(client, 'issuer', new Map(), ANSI_COLOUR);
    const plain = new DemoAccount(client, 'issuer', new Map());
    const done = await coloured.line(event('succeeded'));
    expect(done).toBe(
      `${'accept-small-invoices'.padEnd(26)} ${'a command'.padEnd(44)} ${ESC}32mdone${ESC}39m`,
    );
    expect(await coloured.line(event('rejected', 'CONTRACT_NOT_FOUND'))).toContain(
      `${ESC}31mrejected: CONTRACT_NOT_FOUND${ESC}39m`,
    );
    expect(await coloured.line(event('dead-lettered', 'X'))).toContain(
      `${ESC}1m${ESC}31mDEAD-LETTERED: X${ESC}39m${ESC}22m`,
    );
    expect(await coloured.line(event('pending', 'SEQUENCER_BACKPRESSURE'))).toContain(
      `${ESC}33mretrying after SEQUENCER_BACKPRESSURE${ESC}39m`,
    );
    expect(await plain.line(event('succeeded'))).toBe(stripColour(done!));
  });

  it('colours intent states in the summary', () => {
    expect(paintState('succeeded', '3 succeeded', ANSI_COLOUR)).toBe(
      `${ESC}32m3 succeeded${ESC}39m`,
    );
    expect(paintState('dead-lettered', 'x', ANSI_COLOUR)).toBe(`${ESC}31mx${ESC}39m`);
    expect(paintState('pending', 'x', ANSI_COLOUR)).toBe(`${ESC}33mx${ESC}39m`);
    expect(paintState('pending', 'x', NO_COLOUR)).toBe('x');
  });
});
