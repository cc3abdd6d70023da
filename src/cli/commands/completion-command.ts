import type { CliCommand } from '../cli-command.js';
import type { CliIo } from '../cli-io.js';
import { defineCommand } from '../define-command.js';
import { UsageError } from '../usage-error.js';

/** What completion knows of a command: read from the command table and each command's --help. */
export type CompletionSpec = {
  readonly name: string;
  readonly summary: string;
  /** Words that may come first after the command (`dead-letters list|show|...`). */
  readonly subcommands: readonly string[];
  readonly flags: readonly CompletionFlag[];
};

export type CompletionFlag = {
  readonly flag: string;
  /** The value's placeholder (FILE, N, D, ...); absent for a switch. */
  readonly value?: string;
  readonly description: string;
};

/**
 * The `completion` command. It takes the command table lazily (run-cli.ts owns it and lists
 * this command in it), and derives every command's flags from its `--help` text, so a flag added
 * to a command's help is completed without touching this file.
 */
export function completionCommand(commands: () => readonly CliCommand[]): CliCommand {
  return defineCommand({
    name: 'completion',
    summary: 'print a shell completion script (bash or zsh)',
    usage: 'completion bash|zsh',
    description: `Prints a shell completion script for ledgerbot's commands and their flags. Load it from your
shell's start-up file:

  bash (~/.bashrc):  eval "$(ledgerbot completion bash)"
  zsh  (~/.zshrc):   eval "$(ledgerbot completion zsh)"    (after compinit)`,
    options: {},
    positionals: true,
    run: async ({ positionals }, io) => {
      const shell = positionals[0];
      if (positionals.length !== 1 || (shell !== 'bash' && shell !== 'zsh')) {
        throw new UsageError('completion needs one shell: bash or zsh');
      }
      const specs = await completionSpecs(commands());
      io.out(shell === 'bash' ? bashScript(specs) : zshScript(specs));
      return 0;
    },
  });
}

/** Runs each command's `--help` into a buffer and reads its flags and subcommands. */
export async function completionSpecs(commands: readonly CliCommand[]): Promise<CompletionSpec[]> {
  const specs: CompletionSpec[] = [];
  for (const command of commands) {
    let help = '';
    const io: CliIo = {
      out: (t) => {
        help += t;
      },
      err: () => undefined,
    };
    try {
      await command.run(['--help'], io);
    } catch {
      help = '';
    }
    specs.push({ name: command.name, summary: command.summary, ...parseHelp(command.name, help) });
  }
  return specs;
}

/** The flags (`  --config FILE  the bot config`) and subcommands (`Usage: x a|b ID|c`) of a help. */
export function parseHelp(
  name: string,
  help: string,
): { subcommands: string[]; flags: CompletionFlag[] } {
  const flags = new Map<string, CompletionFlag>();
  for (const m of help.matchAll(
    /^ {2}(?:-\w, )?(--[a-z][a-z0-9-]*)(?: ([A-Z][A-Za-z0-9:,_-]*))?(?: {2,}(.*))?$/gm,
  )) {
    const flag = m[1]!;
    if (flags.has(flag)) continue;
    flags.set(flag, {
      flag,
      ...(m[2] === undefined ? {} : { value: m[2] }),
      description: (m[3] ?? '').trim(),
    });
  }
  if (!flags.has('--help')) flags.set('--help', { flag: '--help', description: 'show this help' });
  const usage = new RegExp(
    `^Usage: ledgerbot ${name} ([a-z][a-z-]*(?: [A-Z]+)?(?:\\|[a-z][a-z-]*(?: [A-Z]+)?)+)`,
    'm',
  ).exec(help);
  const subcommands = usage === null ? [] : usage[1]!.split('|').map((w) => w.split(' ')[0]!);
  return { subcommands, flags: [...flags.values()] };
}

const TOP_FLAGS = ['--help', '--version'];

/** Whether a flag's value is a path (completed with file names), from its placeholder or name. */
function takesPath(f: CompletionFlag): boolean {
  return f.value !== undefined && (/FILE|DIR|PATH/.test(f.value) || /-dir$/.test(f.flag));
}

/** A bash script: `complete -F _ledgerbot ledgerbot`. */
export function bashScript(specs: readonly CompletionSpec[]): string {
  const names = specs.map((s) => s.name);
  const cases = specs.map((s) => {
    const words = [...s.subcommands, ...s.flags.map((f) => f.flag)].join(' ');
    const paths = s.flags.filter(takesPath).map((f) => f.flag);
    const values = s.flags.filter((f) => f.value !== undefined && !takesPath(f)).map((f) => f.flag);
    return [
      `    ${s.name})`,
      `      words='${words}'`,
      `      paths='${paths.join(' ')}'`,
      `      values='${values.join(' ')}'`,
      '      ;;',
    ].join('\n');
  });
  return `# bash completion for ledgerbot. Load it with: eval "$(ledgerbot completion bash)"
_ledgerbot() {
  local cur prev words paths values
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W '${[...names, ...TOP_FLAGS].join(' ')}' -- "$cur"))
    return 0
  fi
  case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
    *)
      return 0
      ;;
  esac
  # The value of a flag: file names for a path, nothing to offer for a number or a duration.
  case " $paths " in
    *" $prev "*)
      COMPREPLY=($(compgen -f -- "$cur"))
      return 0
      ;;
  esac
  case " $values " in
    *" $prev "*)
      COMPREPLY=()
      return 0
      ;;
  esac
  if [ "$COMP_CWORD" -eq 2 ] || [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
  if [ "\${#COMPREPLY[@]}" -eq 0 ]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}
complete -o filenames -F _ledgerbot ledgerbot
`;
}

/** Text inside a single-quoted zsh word. */
function zshQuoted(text: string): string {
  return text.replace(/'/g, `'\\''`);
}

/** A flag's description for `_arguments`' brackets: no brackets or colons in it. */
function zshDescription(text: string): string {
  return zshQuoted(text.replace(/\[/g, '(').replace(/\]/g, ')').replace(/:/g, ' -'))
    .replace(/\s+/g, ' ')
    .trim();
}

/** A zsh script for `compdef`, also usable from a file named _ledgerbot in $fpath. */
export function zshScript(specs: readonly CompletionSpec[]): string {
  const commands = specs.map((s) => `    '${s.name}:${zshQuoted(s.summary)}'`);
  const cases = specs.map((s) => {
    const args = s.flags.map((f) => {
      const what = zshDescription(f.description);
      // A repeatable flag (--model, --party) may be given again.
      const flag = `${/repeatable/.test(f.description) ? '*' : ''}${f.flag}`;
      return f.value === undefined
        ? `        '${flag}[${what}]'`
        : `        '${flag}[${what}]:${zshDescription(f.value)}:${takesPath(f) ? '_files' : ' '}'`;
    });
    const first =
      s.subcommands.length > 0
        ? [`        '1:subcommand:(${s.subcommands.join(' ')})'`, "        '*:file:_files'"]
        : ["        '*:file:_files'"];
    return [
      `    ${s.name})`,
      '      _arguments \\',
      ...[...args, ...first].map((a, i, all) => (i === all.length - 1 ? a : `${a} \\`)),
      '      ;;',
    ].join('\n');
  });
  return `#compdef ledgerbot
# zsh completion for ledgerbot. Load it with: eval "$(ledgerbot completion zsh)" (after compinit)
_ledgerbot() {
  local -a commands
  commands=(
${commands.join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  local command="\${words[2]}"
  shift words
  (( CURRENT-- ))
  case "$command" in
${cases.join('\n')}
  esac
}
if [ "$funcstack[1]" = "_ledgerbot" ]; then
  _ledgerbot "$@"
else
  compdef _ledgerbot ledgerbot
fi
`;
}
