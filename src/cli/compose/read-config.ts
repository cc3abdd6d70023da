import { readFile } from 'node:fs/promises';
import { utf8Text } from '../../core/source/utf8-text.js';
import type { BotConfig } from '../../runtime/config/bot-config.js';
import { ConfigError, type ConfigProblem } from '../../runtime/config/config-error.js';
import { loadBotConfig, type LoadBotConfigOptions } from '../../runtime/config/load-bot-config.js';
import { UsageError } from '../usage-error.js';

/** Config files larger than this are refused before parsing (a config is a few KB). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Reads and validates the bot config for the `run`, `demo` and `validate` commands. Every
 * problem (unreadable file, invalid content) becomes a UsageError, which the CLI prints and
 * exits 2 with; the ConfigError, when there is one, is its `cause`.
 */
export async function readConfig(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: Pick<LoadBotConfigOptions, 'onUnsetSecret'> = {},
): Promise<BotConfig> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_CONFIG_BYTES) {
      throw new UsageError(
        `${path} is ${bytes.length} bytes; a config file is at most ${MAX_CONFIG_BYTES}: is it the right file?`,
      );
    }
    const decoded = utf8Text(bytes);
    if (!decoded.ok) {
      throw new UsageError(
        `${path}:${decoded.line}:${decoded.col}: the config file is not UTF-8 text (saved as Latin-1 or Windows-1252?): save it as UTF-8`,
      );
    }
    text = decoded.text;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as { code?: unknown }).code;
    const why =
      code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (err as Error).message;
    throw new UsageError(
      `cannot read the config file ${path}: ${why}; pass the right one with --config PATH`,
      { cause: err },
    );
  }
  try {
    return loadBotConfig({ path, text, env, ...options });
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, { cause: err });
    throw err;
  }
}

/**
 * The config of a command that needs only some sections: `status`, `pause`, `resume` and
 * `reload` ask the running bot's ops API (`http`); `dead-letters` and `schedule` also read the
 * store (`state`). An unset variable of another section's secret (the ledger's `auth` and
 * `tls`) is no error for them, one of `needs` still is: an operator's shell needs no participant
 * credential to read the bot's status.
 */
export async function readConfigFor(
  needs: readonly ('http' | 'state')[],
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<BotConfig> {
  const unset: ConfigProblem[] = [];
  const config = await readConfig(path, env, {
    onUnsetSecret: (problem) => {
      if ((needs as readonly string[]).includes(problem.path.split('.')[0]!)) unset.push(problem);
    },
  });
  const [first, ...rest] = unset;
  if (first !== undefined) {
    const err = new ConfigError([first, ...rest]);
    throw new UsageError(err.message, { cause: err });
  }
  return config;
}
