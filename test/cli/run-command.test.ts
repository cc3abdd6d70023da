import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { prettyLine, rootLogger, usePrettyLogs } from '../../src/cli/compose/root-logger.js';

const MODEL = fileURLToPath(new URL('../../examples/invoices/model.yaml', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) } };
}

describe('ledgerbot run', () => {
  it('exits 2 when the config file is missing', async () => {
    const t = io();
    expect(await runCli(['run', '--config', '/nonexistent/bot.config.yaml'], t.io)).toBe(2);
    expect(t.err.join('')).toMatch(/cannot read the config file/);
  });

  it('exits 2 on rule errors, naming file:line:col', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-run-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'bad.yaml'), 'version: 1\nrules:\n  - id: x\n    on: {}\n');
    writeFileSync(
      join(dir, 'bot.config.yaml'),
      [
        'ledger:',
        `  embedded: { models: [${MODEL}], parties: [payer] }`,
        '  userId: ledgerbot',
        'rules: bad.yaml',
        `state: { dir: ${join(dir, 'state')} }`,
        'log: { level: silent }',
        '',
      ].join('\n'),
    );
    const t = io();
    expect(await runCli(['run', '--config', join(dir, 'bot.config.yaml')], t.io)).toBe(2);
    expect(t.err.join('')).toMatch(/bad\.yaml:\d+:\d+/);
  });

  it('exits 2 when its ops port is taken, saying which and what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerbot-run-'));
    dirs.push(dir);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      writeFileSync(join(dir, 'rules.yaml'), 'version: 1\nrules: []\n');
      writeFileSync(
        join(dir, 'bot.config.yaml'),
        [
          'ledger:',
          `  embedded: { models: [${MODEL}], parties: [payer] }`,
          '  userId: ledgerbot',
          'rules: rules.yaml',
          `state: { dir: ${join(dir, 'state')} }`,
          `http: { port: ${port} }`,
          'log: { level: silent }',
          '',
        ].join('\n'),
      );
      const t = io();
      expect(await runCli(['run', '--config', join(dir, 'bot.config.yaml')], t.io)).toBe(2);
      expect(t.err.join('')).toBe(
        `ledgerbot: the ops API cannot listen on 127.0.0.1:${port}: the port is in use (another bot, or another program): set http.port to a free one, or 0 for any\n`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('logs JSON lines with secrets redacted, or a readable form with pretty', async () => {
    const t = io();
    const json = rootLogger({ level: 'info', pretty: false }, t.io);
    json.info({ commandId: 'lb-x', token: 'secret-token' }, 'intent state changed');
    // The lines of one event-loop turn are written together, at its end.
    expect(t.out).toEqual([]);
    await turn();
    const line = JSON.parse(t.out[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      msg: 'intent state changed',
      commandId: 'lb-x',
      token: '[redacted]',
    });
    expect(t.out.join('')).not.toContain('secret-token');
    // pino-pretty, one line; the time is local, so only its shape is checked.
    expect(
      prettyLine('{"level":30,"time":"2026-01-05T09:00:01.000Z","msg":"hello","ruleId":"r","n":1}'),
    ).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hello \{"ruleId":"r","n":1\}\n$/);
    const p = io();
    const pretty = rootLogger({ level: 'info', pretty: true }, p.io);
    pretty.info({ commandId: 'lb-x', token: 'secret-token' }, 'intent state changed');
    await turn();
    expect(p.out.join('')).toMatch(
      /INFO: intent state changed \{"commandId":"lb-x","token":"\[redacted\]"\}/,
    );
    expect(p.out.join('')).not.toContain('secret-token');
    // On a terminal: pretty without log.pretty, but JSON with pretty: false.
    const tty = io();
    rootLogger({ level: 'info' }, tty.io, true).info('hi');
    await turn();
    expect(tty.out.join('')).toMatch(/INFO.*: .*hi/);
    expect(() => JSON.parse(tty.out[0]!) as unknown).toThrow();
    const ttyJson = io();
    rootLogger({ level: 'info', pretty: false }, ttyJson.io, true).info('hi');
    await turn();
    expect(JSON.parse(ttyJson.out[0]!)).toMatchObject({ msg: 'hi' });
  });

  it('decides pretty logs from log.pretty first, the terminal only when it is unset', () => {
    expect(usePrettyLogs(true, false)).toBe(true);
    expect(usePrettyLogs(true, true)).toBe(true);
    expect(usePrettyLogs(false, true)).toBe(false);
    expect(usePrettyLogs(false, false)).toBe(false);
    expect(usePrettyLogs(undefined, true)).toBe(true);
    expect(usePrettyLogs(undefined, false)).toBe(false);
  });
});

/** The end of the current event-loop turn, where batched log lines are written. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
