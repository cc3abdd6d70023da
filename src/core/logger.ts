/**
 * The logging surface components receive: the subset of pino's Logger they use, so any pino
 * child logger fits and tests can pass `silentLogger` or a recorder. Ids go in `fields`, never in
 * `msg`.
 */
export type LogFn = (fields: Record<string, unknown>, msg: string) => void;

export type Logger = {
  readonly trace: LogFn;
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
  /**
   * pino's: whether lines of `level` are written. Optional (test recorders keep everything); a
   * caller on a hot path asks it before building the fields of a line that would be dropped.
   */
  readonly isLevelEnabled?: (level: string) => boolean;
};

const noop: LogFn = () => undefined;

export const silentLogger: Logger = {
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => silentLogger,
  isLevelEnabled: () => false,
};
