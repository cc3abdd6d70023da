import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/runtime/config/config-error.js';
import { loadBotConfig } from '../../../src/runtime/config/load-bot-config.js';

const FILE = '/etc/ledgerbot/bot.config.yaml';
const BASE = 'ledger:\n  url: http://127.0.0.1:7575\n  userId: bot\nrules: rules/\n';
const PG = "state:\n  postgres: { url: 'postgres://h/db' }\n";

function load(text: string) {
  return loadBotConfig({ path: FILE, text, env: {} });
}

function errorOf(text: string): ConfigError {
  try {
    load(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('fleet', () => {
  it('reads a name, with the default lease period', () => {
    expect(load(`${BASE}${PG}fleet:\n  name: invoices\n`).fleet).toEqual({
      name: 'invoices',
      leasePeriodMs: 15_000,
    });
  });

  it('reads a lease period', () => {
    expect(load(`${BASE}${PG}fleet: { name: a.b-c_1, leasePeriod: 2s }\n`).fleet).toEqual({
      name: 'a.b-c_1',
      leasePeriodMs: 2_000,
    });
  });

  it('is absent without the key (one bot per schema)', () => {
    expect(load(`${BASE}${PG}`).fleet).toBeUndefined();
  });

  it('refuses a fleet without state.postgres, naming the field at its line', () => {
    const err = errorOf(`${BASE}fleet:\n  name: invoices\n`);
    expect(err.message).toContain(`${FILE}:5:`);
    expect(err.message).toMatch(/`fleet` needs `state\.postgres`/);
  });

  it('refuses a fleet with an embedded sandbox (each member would have its own ledger)', () => {
    const text = `ledger:\n  embedded: { models: [m.yaml] }\n  userId: bot\nrules: rules/\n${PG}fleet: { name: a }\n`;
    expect(errorOf(text).message).toMatch(/`fleet` needs a shared participant/);
  });

  it.each([
    ['a missing name', 'fleet: { leasePeriod: 2s }\n', /fleet.*name/, 7],
    ['a name with a space', "fleet: { name: 'a b' }\n", /fleet\.name/, 7],
    ['an unknown key', 'fleet: { name: a, size: 3 }\n', /size/, 7],
    [
      'a lease period that is no duration',
      'fleet: { name: a, leasePeriod: soon }\n',
      /fleet\.leasePeriod/,
      7,
    ],
    [
      'a lease period under 300ms',
      'fleet: { name: a, leasePeriod: 100ms }\n',
      /between 300ms and 1h/,
      7,
    ],
    [
      'a lease period over an hour',
      'fleet: { name: a, leasePeriod: 2h }\n',
      /between 300ms and 1h/,
      7,
    ],
  ])('refuses %s, naming the field at its line', (_what, yaml, message, line) => {
    const err = errorOf(`${BASE}${PG}${yaml}`);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(`${FILE}:${line}:`);
  });
});
