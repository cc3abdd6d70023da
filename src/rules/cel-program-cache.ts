import type { CelCompileOptions, CelEnvironment } from './cel/cel-environment.js';
import type { CelProgram } from './cel/cel-program.js';

/**
 * The CEL programs of the last load, for the next load with the same environment: a CEL program
 * depends only on its text, its variables and the compile options (the catalogue's types are
 * checked afterwards, by the rule compiler), so `run`'s second load at start (with the
 * participant's packages) and a reload of unchanged files take the programs of the load before
 * instead of parsing and checking every expression again.
 *
 * The n-th request for one text in a load gets the n-th program of that text of the load before:
 * two rules of one load never share a program (as without the cache), and a program is shared
 * only by the same rule in successive loads, one of which replaces the other. Programs the last
 * load did not ask for are dropped at the next load.
 */
export class CelProgramCache {
  readonly #cel: CelEnvironment;
  #programs = new Map<string, CelProgram>();
  #used = new Map<string, CelProgram>();
  readonly #asked = new Map<string, number>();

  /** For loads with `cel` (a program of one environment is not used with another). */
  constructor(cel: CelEnvironment) {
    this.#cel = cel;
  }

  get environment(): CelEnvironment {
    return this.#cel;
  }

  /** Starts a load: keeps the programs of the load before, drops the older ones. */
  beginLoad(): void {
    if (this.#used.size > 0) {
      this.#programs = this.#used;
      this.#used = new Map();
    }
    this.#asked.clear();
  }

  /** `cel.compile`, or the program of the load before for the same request. */
  compile(source: string, variables: readonly string[], options: CelCompileOptions): CelProgram {
    const request = `${variables.join(',')}\u0000${options.maxComprehensionDepth ?? ''}\u0000${source}`;
    const n = this.#asked.get(request) ?? 0;
    this.#asked.set(request, n + 1);
    const key = `${n}\u0000${request}`;
    const program = this.#programs.get(key) ?? this.#cel.compile(source, variables, options);
    this.#used.set(key, program);
    return program;
  }
}
