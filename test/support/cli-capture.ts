import { runCli } from '../../src/cli/run-cli.js';

/** What one in-process CLI run printed, and its exit code. */
export type CliResult = { readonly code: number; readonly out: string; readonly err: string };

/**
 * Runs `ledgerbot <args>` in this process (runCli) and captures its output; `isTTY` makes the
 * output look like a terminal's (colour).
 */
export async function cli(args: string[], options: { isTTY?: boolean } = {}): Promise<CliResult> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    ...(options.isTTY === undefined ? {} : { isTTY: options.isTTY }),
  });
  return { code, out, err };
}
