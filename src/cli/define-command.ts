import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliCommand } from './cli-command.js';
import type { CliIo } from './cli-io.js';

/** One flag of a command: how it parses (node's parseArgs) and how its help line reads. */
export type OptionSpec = {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly short?: string;
  readonly default?: string | boolean | readonly string[] | readonly boolean[];
  /** The value's placeholder in the help (`FILE`, `N`); string options only. */
  readonly value?: string;
  /** The help text; `\n` starts a line continued under the first. */
  readonly help: string;
};

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

type ValueOf<O> = O extends { readonly type: 'boolean' }
  ? O extends { readonly multiple: true }
    ? boolean[]
    : boolean
  : O extends { readonly multiple: true }
    ? string[]
    : string;

/** The parsed flags: an option with a default always has a value. */
export type OptionValues<Os extends OptionSpecs> = {
  readonly [K in keyof Os]: Os[K] extends { readonly default: unknown }
    ? ValueOf<Os[K]>
    : ValueOf<Os[K]> | undefined;
};

export type CommandArgs<Os extends OptionSpecs> = {
  readonly values: OptionValues<Os>;
  /** Empty unless the command declares `positionals`. */
  readonly positionals: readonly string[];
};

export type CommandSpec<Os extends OptionSpecs> = {
  readonly name: string;
  /** One line for `ledgerbot --help`'s command list. */
  readonly summary: string;
  /** The help's first line, after `Usage: ledgerbot ` (the name is not repeated here). */
  readonly usage: string;
  /** What the command does, between the usage line and the options. */
  readonly description: string;
  /** `-h, --help` is added to these. */
  readonly options: Os;
  /** Whether words besides the flags are taken (the command checks how many). */
  readonly positionals?: boolean;
  /** After the options: exit statuses and the like. */
  readonly footer?: string;
  readonly run: (args: CommandArgs<Os>, io: CliIo) => Promise<number>;
};

const HELP_OPTION: OptionSpec = { type: 'boolean', short: 'h', help: 'show this help' };

/** Labels longer than this put their help text on the next line. */
const MAX_LABEL = 20;

/**
 * A subcommand from its declaration: flags are parsed strictly (an unknown flag or a missing
 * value is a usage error, exit 2, in runCli), `--help` prints the help rendered from the same
 * declaration and exits 0, and `run` gets typed values.
 */
export function defineCommand<const Os extends OptionSpecs>(spec: CommandSpec<Os>): CliCommand {
  const help = commandHelp(spec);
  const options = Object.fromEntries(
    Object.entries<OptionSpec>({ ...spec.options, help: HELP_OPTION }).map(([name, o]) => [
      name,
      {
        type: o.type,
        ...(o.multiple === undefined ? {} : { multiple: o.multiple }),
        ...(o.short === undefined ? {} : { short: o.short }),
        ...(o.default === undefined ? {} : { default: o.default }),
      },
    ]),
  ) as NonNullable<ParseArgsConfig['options']>;
  return {
    name: spec.name,
    summary: spec.summary,
    run: async (args: string[], io: CliIo) => {
      const { values, positionals } = parseArgs({
        args,
        options,
        allowPositionals: spec.positionals === true,
        strict: true,
      });
      if (values.help === true) {
        io.out(help);
        return 0;
      }
      return spec.run({ values: values as OptionValues<Os>, positionals }, io);
    },
  };
}

/** The `--help` text of a declaration. */
export function commandHelp<Os extends OptionSpecs>(spec: CommandSpec<Os>): string {
  const rows = [...Object.entries<OptionSpec>(spec.options), ['help', HELP_OPTION] as const].map(
    ([name, o]) => {
      const short = o.short === undefined ? '' : `-${o.short}, `;
      const value = o.type === 'string' && o.value !== undefined ? ` ${o.value}` : '';
      return { label: `  ${short}--${name}${value}`, help: o.help.split('\n') };
    },
  );
  const fitting = rows.map((r) => r.label.length).filter((n) => n <= MAX_LABEL);
  const column = Math.max(...fitting) + 2;
  const lines = rows.flatMap(({ label, help }) => {
    const rest = help.slice(1).map((l) => `${' '.repeat(column)}${l}`);
    return label.length > MAX_LABEL
      ? [label, `${' '.repeat(column)}${help[0]}`, ...rest]
      : [`${label.padEnd(column)}${help[0]}`, ...rest];
  });
  return [
    `Usage: ledgerbot ${spec.usage}`,
    '',
    spec.description.trimEnd(),
    '',
    'Options:',
    ...lines,
    ...(spec.footer === undefined ? [] : ['', spec.footer.trimEnd()]),
    '',
  ].join('\n');
}
