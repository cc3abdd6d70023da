import type { CelCompileOptions, CelEnvironment } from './cel/cel-environment.js';
import type { CelProgram } from './cel/cel-program.js';

/**
 * The CEL programs of a load, shared by every rule of it that asks for the same expression, and
 * kept for the next load with the same environment: a CEL program depends only on its text, its
 * variables and the compile options (the catalogue's types are checked afterwards, by the rule
 * compiler, for each rule), and evaluating one is pure, so one program serves every rule with that
 * text. Rule sets repeat expressions a lot (`${{ event.contractId }}`, `${{ parties.payer }}`):
 * the start-up bench's 1,000 rules ask for 3,500 programs of 950 texts. `run`'s second load at start
 * (with the participant's packages) and a reload of unchanged files take the programs of the load
 * before instead of parsing and checking every expression again.
 *
 * Programs the last load did not ask for are dropped at the next load.
 */
export class CelProgramCache {
  readonly #cel: CelEnvironment;
  #programs = new Map<string, CelProgram>();
  #used = new Map<string, CelProgram>();

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
  }

  /** `cel.compile`, or the program this load or the one before made for the same request. */
  compile(source: string, variables: readonly string[], options: CelCompileOptions): CelProgram {
    const key = `${variables.join(',')}\u0000${options.maxComprehensionDepth ?? ''}\u0000${source}`;
    let program = this.#used.get(key);
    if (program === undefined) {
      program = this.#programs.get(key) ?? this.#cel.compile(source, variables, options);
      this.#used.set(key, program);
    }
    return program;
  }
}
