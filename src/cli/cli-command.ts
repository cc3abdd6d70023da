import type { CliIo } from './cli-io.js';

/** A subcommand: it parses its own arguments and returns the exit code. */
export type CliCommand = {
  readonly name: string;
  readonly summary: string;
  readonly run: (args: string[], io: CliIo) => Promise<number>;
};
