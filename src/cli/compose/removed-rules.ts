import type pg from 'pg';
import type { Logger as PinoLogger } from 'pino';
import { withoutPassword } from '../../store/pg/mask-pg-url.js';
import { forgetRules } from '../../store/pg/rule-origins.js';

export type RemovedRulesOptions = {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** For error messages: the password is taken out of them. */
  readonly url: string;
  /** This member's instance id. */
  readonly me: string;
  readonly leaseMs: number;
  readonly log: PinoLogger;
};

/**
 * The rules a fleet member's reloads removed, until their checkpoint rows are forgotten
 * (`forgetRules`), so that a rule added back later begins where it is added, not where it
 * stopped. A rule waits here while this member's bot still writes under it (it holds the
 * lease) and while another member still has it or holds its lease; one added back is dropped.
 */
export class RemovedRules {
  readonly #o: RemovedRulesOptions;
  /** Each pending rule, with the number of the change that removed it. */
  readonly #pending = new Map<string, number>();
  #changes = 0;
  #forgetting: Promise<void> | undefined;

  constructor(options: RemovedRulesOptions) {
    this.#o = options;
  }

  /** The member's rules went from `before` to `after` (a reload, or a restart's load). */
  changed(before: readonly string[], after: readonly string[]): void {
    const now = new Set(after);
    const change = ++this.#changes;
    for (const id of before) if (!now.has(id)) this.#pending.set(id, change);
    for (const id of after) this.#pending.delete(id);
  }

  /**
   * Forgets those not in `running` (the rules the member's bot writes under) that nobody else
   * has any more; the rest wait for a later call. One call at a time; never rejects (logs).
   */
  forget(running: ReadonlySet<string>): Promise<void> {
    const due = [...this.#pending].filter(([id]) => !running.has(id));
    if (due.length === 0 || this.#forgetting !== undefined) return this.#forgetting ?? done;
    const { pool, schema, url, me, leaseMs, log } = this.#o;
    const ids = due.map(([id]) => id);
    this.#forgetting = forgetRules(pool, schema, ids, { me, leaseMs })
      .then((gone) => {
        // Added back (or added and removed again) meanwhile: pending as that change left it.
        const asked = new Map(due);
        for (const id of gone) {
          if (this.#pending.get(id) === asked.get(id)) this.#pending.delete(id);
        }
        if (gone.length > 0) {
          log.info({ rules: gone }, 'removed rules forgotten: added back, they begin afresh');
        }
      })
      .catch((err: unknown) =>
        log.warn(
          { error: withoutPassword((err as Error).message, url) },
          'forgetting removed rules failed; the next round tries again',
        ),
      )
      .finally(() => (this.#forgetting = undefined));
    return this.#forgetting;
  }

  /** Settles once no forgetting is under way (a reload records its new rules after it). */
  settled(): Promise<void> {
    return this.#forgetting ?? done;
  }
}

const done = Promise.resolve();
