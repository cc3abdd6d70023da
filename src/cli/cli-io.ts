import { terminalSafe } from './present/terminal-safe.js';

/** Where the CLI writes. Injected so commands can be tested without touching the real stdio. */
export type CliIo = {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether `out` is a terminal: colour is only used then (see colour.ts). Absent: no. */
  readonly isTTY?: boolean;
};

/** The process's stdio, every write made terminal-safe (see terminalSafe). */
export const processIo: CliIo = {
  out: (text) => process.stdout.write(terminalSafe(text)),
  err: (text) => process.stderr.write(terminalSafe(text)),
  get isTTY() {
    return process.stdout.isTTY === true;
  },
};
