import type { Clock, TimerHandle } from '../../core/clock.js';
import { sha256Hex } from '../../core/sha256-hex.js';
import type { LeaseHold } from './commit-fence.js';
import { assignRules } from './fleet-assignment.js';
import { LeaseBook } from './lease-book.js';
import type { LeaseFenceSource } from './lease-fence.js';
import type { FleetMemberId, FleetRules, LeaseStore } from './lease-store.js';

/** What the keeper tells its instance (the runtime starts and stops rules on these). */
export type LeaseKeeperEvents = {
  /** Leases taken: load these rules' state (checkpoint, open intents) now, and start them. */
  readonly acquired?: (holds: readonly LeaseHold[]) => void;
  /**
   * Leases lost (taken over, or past their time by this instance's clock): stop the rules at
   * once and drop what they have not committed; the fence refuses their writes from now on.
   */
  readonly lost?: (holds: readonly LeaseHold[]) => void;
  /**
   * Leases about to be given up (rebalancing, a removed rule, a clean stop): stop the rules and
   * commit their writes; the keeper waits for it, then releases. Keep it short: the renewal of
   * the other leases waits too.
   */
  readonly releasing?: (holds: readonly LeaseHold[]) => Promise<void> | void;
  /** A round failed (the database did not answer); the next one tries again. */
  readonly error?: (err: unknown) => void;
};

export type LeaseKeeperOptions = {
  readonly store: LeaseStore;
  /** The schema of the store's tables (the fence names them). */
  readonly schema: string;
  readonly me: FleetMemberId;
  readonly clock: Clock;
  /**
   * The rules of this instance's configuration. Members normally have the same; while a reload
   * has reached some members only, a rule goes only to a member that has it (`assignRules`).
   */
  readonly ruleIds: readonly string[];
  readonly events?: LeaseKeeperEvents;
};

/**
 * One fleet member's leases. Every lease period / 3 a round renews what it holds (reporting at
 * once what it lost), beats its heart, computes the fair assignment over the live members
 * (`assignRules`), releases the rules assigned to another member, and takes the free ones
 * assigned to it. A lease renewed every third of its period survives two missed rounds; a
 * member that stops renewing loses its rules to the others after at most one period and one
 * round. It never counts on a lease it knows lost or past its time (`isValid`, which the
 * commit fence asks), and rounds never overlap.
 */
export class LeaseKeeper implements LeaseFenceSource {
  readonly #o: LeaseKeeperOptions;
  readonly #book: LeaseBook;
  readonly #roundMs: number;
  #rules: Required<FleetRules>;
  /** The hash of the rules the database has for this member, once a heartbeat wrote them. */
  #published: string | undefined;
  #timer: TimerHandle | undefined;
  #round: Promise<void> | undefined;
  #stopped = false;

  constructor(options: LeaseKeeperOptions) {
    this.#o = options;
    this.#book = new LeaseBook(options.clock, options.store.leaseMs);
    this.#roundMs = Math.max(10, Math.floor(options.store.leaseMs / 3));
    this.#rules = fleetRules(options.ruleIds);
  }

  get schema(): string {
    return this.#o.schema;
  }

  get instanceId(): string {
    return this.#o.me.instanceId;
  }

  /** The leases held now, by rule id. */
  held(): LeaseHold[] {
    return this.#book.held().sort((a, b) => (a.ruleId < b.ruleId ? -1 : 1));
  }

  /** The generation `ruleId` is held at (what the store stamps its writes with), if held. */
  generationOf(ruleId: string): number | undefined {
    return this.#book.generationOf(ruleId);
  }

  /**
   * The leases a commit writing for `ruleIds` writes under (what `CommitFence.check` takes; the
   * PostgreSQL store's `holdsFor`). A rule not held gets generation 0, which no lease has (the
   * first is 1), so the fence refuses a write for a rule this instance lost or never took,
   * rather than letting it through for want of a lease to check.
   */
  holdsFor(ruleIds: Iterable<string>): LeaseHold[] {
    return [...ruleIds].map((ruleId) => ({
      ruleId,
      generation: this.#book.generationOf(ruleId) ?? 0,
    }));
  }

  isValid(hold: LeaseHold): boolean {
    return this.#book.isValid(hold);
  }

  lost(holds: readonly LeaseHold[]): void {
    const dropped = this.#book.drop(
      holds.filter((h) => this.#book.generationOf(h.ruleId) === h.generation).map((h) => h.ruleId),
    );
    if (dropped.length > 0) this.#o.events?.lost?.(dropped);
  }

  /** The rules after a reload: new ones are shared out, removed ones released, at the next round. */
  setRules(ruleIds: readonly string[]): void {
    this.#rules = fleetRules(ruleIds);
  }

  /** Starts the rounds; the first runs at once. */
  start(): void {
    if (this.#stopped || this.#timer !== undefined || this.#round !== undefined) return;
    this.#schedule(0);
  }

  /** Stops the rounds, releases every lease (after `releasing`) and leaves the fleet. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#round;
    const all = this.#book.held();
    if (all.length > 0) {
      await this.#o.events?.releasing?.(all);
      this.#book.drop(all.map((h) => h.ruleId));
      await this.#o.store.release(this.instanceId, all);
    }
    await this.#o.store.leave(this.instanceId);
  }

  #schedule(ms: number): void {
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      const began = this.#o.clock.now();
      this.#round = this.#runRound()
        // A listener that throws must not end the rounds (nor reject where nobody listens).
        .catch((err: unknown) => {
          try {
            this.#o.events?.error?.(err);
          } catch {
            // Nothing left to tell.
          }
        })
        .finally(() => {
          this.#round = undefined;
          if (!this.#stopped) {
            this.#schedule(Math.max(0, this.#roundMs - (this.#o.clock.now() - began)));
          }
        });
    }, ms);
  }

  async #runRound(): Promise<void> {
    try {
      await this.#renew();
      if (!this.#stopped) await this.#rebalance();
    } catch (err) {
      this.#o.events?.error?.(err);
    } finally {
      const expired = this.#book.expire();
      if (expired.length > 0) this.#o.events?.lost?.(expired);
    }
  }

  async #renew(): Promise<void> {
    const { store, clock, me } = this.#o;
    const sentAt = clock.now();
    const holds = this.#book.held();
    const lost = await store.renew(me.instanceId, holds);
    const lostIds = new Set(lost.map((h) => h.ruleId));
    this.#book.renewed(
      holds.filter((h) => !lostIds.has(h.ruleId)),
      sentAt,
    );
    this.lost(lost);
    const rules = this.#rules;
    const send = this.#published !== rules.hash;
    this.#published = undefined;
    await store.heartbeat(me, rules, send);
    this.#published = rules.hash;
  }

  async #rebalance(): Promise<void> {
    const { store, clock, me } = this.#o;
    const [members, leases] = await Promise.all([store.members(), store.leases()]);
    const rules = this.#rules;
    const others = members.filter((m) => m.live && m.instanceId !== me.instanceId);
    const live = [me.instanceId, ...others.map((m) => m.instanceId)];
    const knows = await store.ruleIdsOf(
      others.filter((m) => m.rulesHash !== rules.hash).map((m) => m.instanceId),
    );
    const owners = new Map<string, string>();
    const free = new Set<string>(rules.ids);
    for (const l of leases) {
      if (l.expired || l.owner === null) continue;
      owners.set(l.ruleId, l.owner);
      free.delete(l.ruleId);
    }
    const target = assignRules(live, rules.ids, owners, knows);
    const release = this.#book.held().filter((h) => target.get(h.ruleId) !== me.instanceId);
    if (release.length > 0) {
      await this.#o.events?.releasing?.(release);
      this.#book.drop(release.map((h) => h.ruleId));
      await store.release(me.instanceId, release);
    }
    if (this.#stopped) return;
    const wanted = [...free].filter(
      (id) => target.get(id) === me.instanceId && this.#book.generationOf(id) === undefined,
    );
    if (wanted.length === 0) return;
    const sentAt = clock.now();
    const taken = await store.acquire(me.instanceId, wanted);
    this.#book.acquired(taken, sentAt);
    if (taken.length > 0) this.#o.events?.acquired?.(taken);
  }
}

function fleetRules(ruleIds: readonly string[]): Required<FleetRules> {
  const ids = [...new Set(ruleIds)].sort();
  return { ids, hash: sha256Hex(JSON.stringify(ids)) };
}
