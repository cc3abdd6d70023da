import type { CompiledRule, RuleSet } from '../rules/compiled-rule.js';
import { indexRules, type RuleIndex } from '../rules/rule-index.js';
import { ruleContentHash } from './rule-set-diff.js';
import { planSubscription, type SubscriptionPlan } from './subscription-plan.js';

/** A rule as the ops endpoints show it. */
export type RuleStatus = {
  readonly id: string;
  readonly revision: number;
  readonly trigger: 'created' | 'exercised' | 'archived' | 'schedule';
  /**
   * `paused`: its events wait (the checkpoint holds at `pausedAtOffset`; a schedule rule's slots
   * wait, and it holds nothing); `resuming`: the events
   * that arrived while it was paused are being evaluated; `disabled`: `enabled: false`.
   */
  readonly state: 'active' | 'paused' | 'resuming' | 'disabled';
  /** Epoch ms the pause began (paused and resuming only). */
  readonly pausedAt?: number;
  readonly pausedAtOffset?: number;
  readonly file: string;
  readonly line: number;
  /** See `ruleContentHash`. */
  readonly hash: string;
};

export type PauseState = {
  readonly since: number;
  /** Events after this offset were not evaluated for the rule; the checkpoint holds here. */
  readonly offset: number;
  resuming: boolean;
};

/** The index for the offsets in (`above`, `upTo`]: the rules whose own checkpoint is below them. */
type FlooredIndex = { readonly above: number; readonly upTo: number; readonly index: RuleIndex };

/**
 * The rules in effect and what follows from them: the subscription plan, the index the live
 * stream is evaluated with (every rule but the paused ones), the pauses, and each rule's own
 * checkpoint while the stream is below it.
 */
export class RuleBook {
  readonly #parties: Readonly<Record<string, string>>;
  readonly #paused = new Map<string, PauseState>();
  /** Rule id → its own checkpoint: events at or below it are not the rule's to evaluate. */
  readonly #floors = new Map<string, number>();
  /** The highest of `#floors`; undefined once the stream is past every one (or there are none). */
  #highestFloor: number | undefined;
  #floored: FlooredIndex | undefined;
  #rules: RuleSet;
  #plan: SubscriptionPlan;
  #index: RuleIndex;

  /** Throws RuntimeError UNKNOWN_PARTY when a rule's party alias has no id. */
  constructor(rules: RuleSet, parties: Readonly<Record<string, string>>) {
    this.#parties = parties;
    this.#plan = planSubscription(rules, parties);
    this.#rules = rules;
    this.#index = indexRules(rules);
  }

  get rules(): RuleSet {
    return this.#rules;
  }

  get plan(): SubscriptionPlan {
    return this.#plan;
  }

  /** The live stream's index: every rule but the paused ones (a resuming one is back in). */
  get index(): RuleIndex {
    return this.#index;
  }

  /**
   * Each rule's own checkpoint (a fleet member's `rule:<id>` rows), when the bot begins lower,
   * at the lowest of them: an event at or below a rule's own is not evaluated for that rule.
   */
  setFloors(floors: ReadonlyMap<string, number>): void {
    this.#floors.clear();
    let highest: number | undefined;
    for (const [id, offset] of floors) {
      this.#floors.set(id, offset);
      highest = Math.max(highest ?? offset, offset);
    }
    this.#highestFloor = highest;
    this.#floored = undefined;
  }

  /** The rule's own checkpoint while the stream has not passed every one, else undefined. */
  floorOf(ruleId: string): number | undefined {
    return this.#highestFloor === undefined ? undefined : this.#floors.get(ruleId);
  }

  /**
   * The index to evaluate the event at `offset` with: `index`, but without the rules whose own
   * checkpoint is at or above `offset`. One comparison once the stream is past every floor
   * (the floors are dropped then); below, an index per stretch between two floors, cached.
   */
  indexAt(offset: number): RuleIndex {
    const highest = this.#highestFloor;
    if (highest === undefined) return this.#index;
    if (offset > highest) {
      this.#floors.clear();
      this.#highestFloor = undefined;
      this.#floored = undefined;
      return this.#index;
    }
    const cached = this.#floored;
    if (cached !== undefined && offset > cached.above && offset <= cached.upTo) return cached.index;
    let above = Number.NEGATIVE_INFINITY;
    let upTo = highest;
    for (const floor of this.#floors.values()) {
      if (floor < offset) above = Math.max(above, floor);
      else upTo = Math.min(upTo, floor);
    }
    const rules = this.liveRules().filter((r) => {
      const floor = this.#floors.get(r.id);
      return floor === undefined || floor < offset;
    });
    this.#floored = { above, upTo, index: indexRules(rules) };
    return this.#floored.index;
  }

  find(ruleId: string): CompiledRule | undefined {
    return this.#rules.rules.find((r) => r.id === ruleId);
  }

  pauseOf(ruleId: string): PauseState | undefined {
    return this.#paused.get(ruleId);
  }

  /**
   * Where the checkpoint holds: the offset of the earliest pause (resuming ones included). A
   * schedule rule's pause holds nothing: it reads no events (a `forEach` queries the ledger at
   * the slot), so holding would only make a restart, or a fleet's checkpoint rows, go back for it.
   */
  heldAt(): number | undefined {
    let held: number | undefined;
    for (const [id, p] of this.#paused) {
      if (this.find(id)?.trigger.kind === 'schedule') continue;
      held = Math.min(held ?? p.offset, p.offset);
    }
    return held;
  }

  /** The rules the live stream evaluates (see `index`). */
  liveRules(): CompiledRule[] {
    return this.#rules.rules.filter((r) => this.#paused.get(r.id)?.resuming !== false);
  }

  pause(ruleId: string, state: PauseState): void {
    this.#paused.set(ruleId, state);
    this.#reindex();
  }

  /** The paused rule takes part in the live evaluation again; its pause stays until `end`. */
  startResuming(pause: PauseState): void {
    pause.resuming = true;
    this.#reindex();
  }

  /** Ends the pause if it is still `pause`; whether it did. */
  end(ruleId: string, pause: PauseState): boolean {
    if (this.#paused.get(ruleId) !== pause) return false;
    this.#paused.delete(ruleId);
    this.#reindex();
    return true;
  }

  /**
   * Puts `ruleSet` in effect. Throws RuntimeError UNKNOWN_PARTY before anything changes. The
   * pauses of removed rules end (their events are not wanted any more; a resuming one finishes
   * its replay); returns their ids.
   */
  swap(ruleSet: RuleSet): string[] {
    const plan = planSubscription(ruleSet, this.#parties);
    const ids = new Set(ruleSet.rules.map((r) => r.id));
    const dropped: string[] = [];
    for (const [id, p] of this.#paused) {
      if (ids.has(id) || p.resuming) continue;
      this.#paused.delete(id);
      dropped.push(id);
    }
    this.#rules = ruleSet;
    this.#plan = plan;
    this.#reindex();
    return dropped;
  }

  status(): RuleStatus[] {
    return this.#rules.rules.map((rule) => this.statusOf(rule));
  }

  statusOf(rule: CompiledRule): RuleStatus {
    const p = this.#paused.get(rule.id);
    return {
      id: rule.id,
      revision: rule.revision,
      trigger: rule.trigger.kind,
      state: !rule.enabled
        ? 'disabled'
        : p === undefined
          ? 'active'
          : p.resuming
            ? 'resuming'
            : 'paused',
      ...(p === undefined ? {} : { pausedAt: p.since, pausedAtOffset: p.offset }),
      file: rule.pos.file,
      line: rule.pos.line,
      hash: ruleContentHash(rule),
    };
  }

  #reindex(): void {
    this.#index = indexRules(this.liveRules());
    this.#floored = undefined;
  }
}
