/** Where the CLI writes. Injected so commands can be tested without touching the real stdio. */
export type CliIo = {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
};

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};
