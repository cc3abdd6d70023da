import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/core/logger.js';
import { loadRules } from '../../../src/rules/load-rules.js';
import { compileBotOptions } from '../../../src/runtime/compile-bot-options.js';
import { loadBotConfig } from '../../../src/runtime/config/load-bot-config.js';
import { botOptionsOf, type BotParts } from '../../../src/cli/compose/bot-options-of-config.js';

const MINIMAL_CONFIG = 'ledger:\n  url: http://127.0.0.1:7575\n  userId: bot\nrules: rules/\n';

const load = (text: string) => loadBotConfig({ path: '/b/bot.config.yaml', text, env: {} });

const parts: BotParts = {
  rules: loadRules([]).ruleSet,
  parties: { alice: 'alice::1220' },
  packageNameOf: (id) => (id === 'p1' ? 'pkg-one' : undefined),
  ledger: {} as never,
  store: {} as never,
  logger: silentLogger,
  embedded: false,
};

describe('botOptionsOf (a loaded config as createBot options)', () => {
  it("takes the config's numbers and the built parts", () => {
    const config = load(
      `${MINIMAL_CONFIG}start: begin\nsubmission:\n  maxInFlight: 3\n  completionTimeout: 5s\nstate:\n  retention: 1h\n`,
    );
    const o = botOptionsOf(config, parts);
    expect(o).toMatchObject({
      userId: 'bot',
      start: { kind: 'begin' },
      resetCheckpoint: false,
      shadow: false,
      submission: { maxInFlight: 3, completionTimeoutMs: 5_000, dedup: config.submission.dedup },
      retentionMs: 3_600_000,
    });
    expect(o.rules).toBe(parts.rules);
    expect(o.parties).toBe(parts.parties);
    expect(o.packageNameOf).toBe(parts.packageNameOf);
    expect(o.logger).toBe(parts.logger);
  });

  it('resets the checkpoint when asked, and always on an embedded sandbox; shadow as asked', () => {
    const config = load(MINIMAL_CONFIG);
    expect(botOptionsOf(config, parts, { resetCheckpoint: true }).resetCheckpoint).toBe(true);
    expect(botOptionsOf(config, { ...parts, embedded: true }).resetCheckpoint).toBe(true);
    expect(botOptionsOf(config, parts, { shadow: true }).shadow).toBe(true);
  });
});

describe('one source of defaults (issue 14 §4)', () => {
  it('a library bot with minimal options equals a minimal bot.config.yaml, field by field', () => {
    const { rules, parties, ledger, store } = parts;
    const library = compileBotOptions({ rules, parties, userId: 'bot', ledger, store });
    const cli = compileBotOptions(botOptionsOf(load(MINIMAL_CONFIG), parts));
    // Every field of the compiled options is compared on its own, so a new one is not missed;
    // only the logger and the package names differ on purpose (`run` always gives its root
    // logger, and its catalogue's names).
    expect(Object.keys(cli).sort()).toEqual(Object.keys(library).sort());
    for (const key of Object.keys(library) as (keyof typeof library)[]) {
      if (key === 'logger' || key === 'packageNameOf') continue;
      expect({ [key]: cli[key] }).toEqual({ [key]: library[key] });
    }
  });
});
