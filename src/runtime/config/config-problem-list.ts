import type { SourceProblem, YamlLocator, YamlPath } from '../../core/source/index.js';
import { IllegalStateError } from '../../core/illegal-state-error.js';
import { ConfigError, type ConfigProblem, type ConfigProblemCode } from './config-error.js';
import { fieldPath } from './describe-config-value.js';

/**
 * The problems found in one config file, in the order found. Problems about a secret field
 * whose variable is unset (see `skip`) are dropped: with `onUnsetSecret` its value is moot.
 */
export class ConfigProblemList {
  readonly #file: string;
  readonly #list: ConfigProblem[] = [];
  readonly #skipped = new Set<string>();

  constructor(file: string) {
    this.#file = file;
  }

  get size(): number {
    return this.#list.length;
  }

  /** Drops every later problem about the value at `path`. */
  skip(path: YamlPath): void {
    this.#skipped.add(path.join('/'));
  }

  add(
    pos: { readonly line: number; readonly col: number },
    path: YamlPath,
    code: ConfigProblemCode,
    message: string,
    hint?: string,
  ): void {
    if (this.#skipped.has(path.join('/'))) return;
    this.#list.push(configProblem(this.#file, pos, path, code, message, hint));
  }

  /** Problems of the shared front end (YAML, schema), already placed. */
  addAll(found: readonly SourceProblem<ConfigProblemCode>[]): void {
    for (const p of found) this.add(p, p.path, p.code, p.message, p.hint);
  }

  /** Throws ConfigError with every problem so far; for a step that found one. */
  fail(): never {
    this.throwIfAny();
    throw new IllegalStateError('a config step failed without a problem');
  }

  /** Throws ConfigError with every problem so far, if there is one. */
  throwIfAny(): void {
    const [first, ...rest] = this.#list;
    if (first !== undefined) throw new ConfigError([first, ...rest]);
  }
}

export function configProblem(
  file: string,
  pos: { readonly line: number; readonly col: number },
  path: YamlPath,
  code: ConfigProblemCode,
  message: string,
  hint?: string,
): ConfigProblem {
  return {
    file,
    line: pos.line,
    col: pos.col,
    path: fieldPath(path),
    code,
    message,
    ...(hint === undefined ? {} : { hint }),
  };
}

/** What the checks beyond the schema need: where things are, where problems go, how to say values. */
export type ConfigCheckContext = {
  readonly at: YamlLocator;
  readonly problems: ConfigProblemList;
  /** A value for a message (never a secret or a value from the environment). */
  readonly describe: (path: YamlPath, value: unknown) => string;
};
