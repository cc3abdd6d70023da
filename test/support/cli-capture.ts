import { runCli } from '../../src/cli/run-cli.js';

/** What one in-process CLI run printed, and its exit code. */
export type CliResult = { readonly code: number; readonly out: string; readonly err: string };

/** Runs `ledgerbot <args>` in this process (runCli) and captures its output. */
export async function cli(args: string[]): Promise<CliResult> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
  });
  return { code, out, err };
}
