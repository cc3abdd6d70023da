import { DEFAULTS } from '../core/defaults.js';
import { parseDuration } from '../core/duration.js';
import { UsageError } from './usage-error.js';

// Parsers for option values, shared by the commands so every bad value names its flag.

/** A duration flag such as `--duration 30s`. */
export function durationOption(name: string, text: string): number {
  try {
    return parseDuration(text);
  } catch (err) {
    throw new UsageError(`${name} ${text}: ${(err as Error).message}`, { cause: err });
  }
}

/** A whole-number flag within [min, max]. */
export function integerOption(
  name: string,
  text: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${name} ${text}: expected a whole number from ${min} to ${max}`);
  }
  return n;
}

/** `--port`: 0 picks a free port. */
export function portOption(text: string): number {
  return integerOption('--port', text, 0, 65_535);
}

/**
 * `--config FILE`, read from ./bot.config.yaml when not given; `note` follows the help text
 * (what the command needs of the config).
 */
export function configOption(note = '') {
  return {
    config: {
      type: 'string',
      default: DEFAULTS.cli.configFile,
      value: 'FILE',
      help: `the bot config (default ./${DEFAULTS.cli.configFile})${note}`,
    },
  } as const;
}
