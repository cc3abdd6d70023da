import { createRequire } from 'node:module';
import { pino, type Logger as PinoLogger } from 'pino';
import type { prettyFactory as PrettyFactory } from 'pino-pretty';
import { redactSecrets } from '../../core/redact-secrets.js';
import type { LogConfig } from '../../runtime/config/bot-config.js';
import type { CliIo } from '../cli-io.js';
import { batchedWriter } from './batched-writer.js';

/**
 * Whether log lines are pretty-printed: `log.pretty` decides when it is set (false means JSON
 * even on a terminal); unset, a terminal gets pretty lines and anything else JSON.
 */
export function usePrettyLogs(pretty: boolean | undefined, tty: boolean): boolean {
  return pretty ?? tty;
}

/**
 * The root logger: JSON lines (what log shippers want), or pino-pretty's one-line form (see
 * usePrettyLogs; `tty`: stdout is a terminal, which also turns colours on).
 */
export function rootLogger(log: LogConfig, io: CliIo, tty = false): PinoLogger {
  const options = {
    level: log.level,
    // Secrets never reach the logs, even if a component puts one in a field by mistake.
    formatters: { log: redactSecrets, bindings: redactSecrets },
    base: null,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const out = batchedWriter(io.out);
  if (!usePrettyLogs(log.pretty, tty)) {
    return pino(options, { write: out });
  }
  const pretty = prettyFactory({ ...PRETTY_OPTIONS, colorize: tty });
  return pino(options, { write: (line: string) => out(pretty(line)) });
}

const require = createRequire(import.meta.url);

/** pino-pretty, loaded for the first pretty line only: a JSON-logging daemon never loads it. */
function prettyFactory(
  ...args: Parameters<typeof PrettyFactory>
): ReturnType<typeof PrettyFactory> {
  return (require('pino-pretty') as { prettyFactory: typeof PrettyFactory }).prettyFactory(...args);
}

const PRETTY_OPTIONS = {
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname',
} as const;

/** `[12:00:01.000] INFO: message {"key":"value"}` from one pino JSON line (no colours). */
export function prettyLine(line: string): string {
  return prettyFactory({ ...PRETTY_OPTIONS, colorize: false })(line);
}
