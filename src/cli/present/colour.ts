import type { CliIo } from '../cli-io.js';

/**
 * ANSI colour for the CLI's human output (the demo table, `validate`, `test`). On only when
 * stdout is a terminal, `NO_COLOR` is unset or empty (https://no-color.org) and the command was
 * not given `--no-color`; otherwise every function returns its text unchanged.
 */
export type Colour = {
  readonly enabled: boolean;
  /** Failures and errors. */
  readonly red: (text: string) => string;
  /** Passes and successes. */
  readonly green: (text: string) => string;
  /** Warnings, retries. */
  readonly yellow: (text: string) => string;
  /** Locations (file:line:col). */
  readonly cyan: (text: string) => string;
  readonly bold: (text: string) => string;
  /** Hints and secondary text. */
  readonly dim: (text: string) => string;
};

const paint =
  (on: number, off: number) =>
  (text: string): string =>
    text === '' ? text : `\u001b[${on}m${text}\u001b[${off}m`;

const plain = (text: string): string => text;

export const NO_COLOUR: Colour = {
  enabled: false,
  red: plain,
  green: plain,
  yellow: plain,
  cyan: plain,
  bold: plain,
  dim: plain,
};

export const ANSI_COLOUR: Colour = {
  enabled: true,
  red: paint(31, 39),
  green: paint(32, 39),
  yellow: paint(33, 39),
  cyan: paint(36, 39),
  bold: paint(1, 22),
  dim: paint(2, 22),
};

/** The `--no-color` flag, for a command's options (see defineCommand). */
export const NO_COLOR_OPTION = {
  'no-color': {
    type: 'boolean',
    default: false,
    help: 'no colour (also off when NO_COLOR is set or stdout is not a terminal)',
  },
} as const;

/** Colour for `io`, unless `noColor` (the `--no-color` flag) or `NO_COLOR` turns it off. */
export function colourFor(
  io: CliIo,
  noColor: boolean | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Colour {
  const off = noColor === true || (env.NO_COLOR ?? '') !== '' || io.isTTY !== true;
  return off ? NO_COLOUR : ANSI_COLOUR;
}

/** `file:line:col: [warning: ]message` lines (and their `hint:` lines), coloured. */
export function paintProblems(text: string, c: Colour): string {
  if (!c.enabled) return text;
  return text
    .split('\n')
    .map((line) => {
      const hint = /^(\s+)(hint:.*)$/.exec(line);
      if (hint !== null) return `${hint[1]}${c.dim(hint[2]!)}`;
      const m = /^(.+?:\d+:\d+:)( warning:)?( .*)?$/.exec(line);
      if (m === null) return line;
      const message = m[3] ?? '';
      return m[2] === undefined
        ? `${c.cyan(m[1]!)}${c.red(message)}`
        : `${c.cyan(m[1]!)}${c.yellow(m[2])}${message}`;
    })
    .join('\n');
}

const ANSI_CODE = new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, 'g');

/** Strips ANSI colour codes (for tests and widths). */
export function stripColour(text: string): string {
  return text.replace(ANSI_CODE, '');
}
