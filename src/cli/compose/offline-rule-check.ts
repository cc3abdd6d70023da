import type { Logger } from '../../core/logger.js';

/**
 * `run`'s check of the rules against the config's packages alone, for a start against a
 * participant. The participant's check decides (it compiles the rules once, against every
 * package it has), so this one runs only while the participant cannot be asked: its first
 * attempt failed and the start waits, or it refused the bot. A rule mistake then still ends the
 * start at once with exit 2, instead of after the wait or behind the participant's error.
 */
export class OfflineRuleCheck {
  readonly #check: () => Promise<unknown>;
  readonly #logger: Logger;
  #run: Promise<void> | undefined;
  #fail: (err: unknown) => void = () => undefined;
  /** Rejects with the check's error once it fails; never resolves. Race the waits with it. */
  readonly failure: Promise<never>;

  constructor(check: () => Promise<unknown>, logger: Logger) {
    this.#check = check;
    this.#logger = logger;
    this.failure = new Promise<never>((_, reject) => (this.#fail = reject));
    this.failure.catch(() => undefined); // raced, or never looked at: not unhandled
  }

  /** Whether the check has been started. */
  get started(): boolean {
    return this.#run !== undefined;
  }

  /** Starts the check, once (a later call returns the same run); rejects with its error. */
  run(): Promise<void> {
    if (this.#run === undefined) {
      this.#logger.info(
        {},
        "checking the rules against the config's packages while the participant cannot be asked",
      );
      this.#run = this.#check().then(
        () => undefined,
        (err: unknown) => {
          this.#fail(err);
          throw err;
        },
      );
    }
    return this.#run;
  }

  /** Starts the check in the background (see `failure`), once. */
  start(): void {
    this.run().catch(() => undefined);
  }

  /** `promise`, or the check's error if it fails first. */
  race<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.failure]);
  }
}
