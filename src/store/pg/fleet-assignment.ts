/**
 * Which live member of a fleet should own each rule.
 *
 * The unit of ownership is a rule, not a partition of its trigger keys: rules are what users
 * name, pause, resume and reload, what `/status` shows and what a checkpoint and a schedule slot
 * belong to, so one owner per rule keeps every operation and every log line about one process.
 * Splitting one busy rule's trigger keys over several members is a later refinement, for a rule
 * that alone is more than a member can carry.
 *
 * Every member computes the assignment from the same inputs (the live members and the current
 * owners, both read from the database) and acts only on its own part: it takes the free rules
 * assigned to it and releases those assigned to another. So the function must be deterministic,
 * balanced and stable:
 * - balanced: each member gets ⌊n/m⌋ or ⌈n/m⌉ of the n rules;
 * - stable: a current owner keeps its rules up to its fair share, so a member joining takes only
 *   its share from the others, and a member leaving hands on only its own rules;
 * - the rules that do move go by rendezvous hashing (the highest score of member and rule among
 *   the members with room), so which member keeps or gets which rule does not depend on order.
 *
 * Members normally run the same rules. While they do not (a reload reaching one member before
 * another), `knows` lists the rules of each member whose rules differ from `ruleIds` (a member
 * not in it has exactly `ruleIds`): the rules every member knows are shared out as above, and a
 * rule only some know stays with its owner if that is one of them, or goes by rendezvous hashing
 * to one of them, unbalanced until the reload has reached every member. So no rule is assigned to a member that cannot run it.
 */
export function assignRules(
  memberIds: readonly string[],
  ruleIds: readonly string[],
  owners: ReadonlyMap<string, string>,
  knows: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): Map<string, string> {
  const members = [...new Set(memberIds)].sort();
  const target = new Map<string, string>();
  if (members.length === 0) return target;
  const knowers = (rule: string): string[] =>
    members.filter((m) => knows.get(m)?.has(rule) ?? true);
  const rules: string[] = [];
  for (const rule of [...new Set(ruleIds)].sort()) {
    const some = knowers(rule);
    if (some.length === members.length) rules.push(rule);
    else if (some.length > 0) {
      const owner = owners.get(rule);
      target.set(
        rule,
        owner !== undefined && some.includes(owner) ? owner : highestScore(some, rule),
      );
    }
  }
  const base = Math.floor(rules.length / members.length);
  const extra = rules.length % members.length;

  const owned = new Map<string, string[]>(members.map((m) => [m, []]));
  for (const rule of rules) {
    const owner = owners.get(rule);
    if (owner !== undefined) owned.get(owner)?.push(rule);
  }
  // The ⌈n/m⌉ shares go to the members that hold most now, so fewer rules move.
  const byHeld = [...members].sort(
    (a, b) => owned.get(b)!.length - owned.get(a)!.length || (a < b ? -1 : 1),
  );
  const room = new Map<string, number>(byHeld.map((m, i) => [m, base + (i < extra ? 1 : 0)]));

  for (const member of members) {
    const mine = owned.get(member)!;
    mine.sort((a, b) => score(member, b) - score(member, a) || (a < b ? -1 : 1));
    const keep = mine.slice(0, room.get(member));
    for (const rule of keep) target.set(rule, member);
    room.set(member, room.get(member)! - keep.length);
  }
  for (const rule of rules) {
    if (target.has(rule)) continue;
    // The rooms add up to the number of rules, so a member with room is always left.
    const best = highestScore(
      members.filter((m) => room.get(m)! > 0),
      rule,
    );
    target.set(rule, best);
    room.set(best, room.get(best)! - 1);
  }
  return target;
}

/** Of `members` (not empty, sorted), the one with the highest score for `rule`. */
function highestScore(members: readonly string[], rule: string): string {
  let best = members[0]!;
  let bestScore = score(best, rule);
  for (const member of members.slice(1)) {
    const s = score(member, rule);
    if (s > bestScore) {
      best = member;
      bestScore = s;
    }
  }
  return best;
}

/**
 * The rendezvous score of a member for a rule: FNV-1a over both ids, then MurmurHash3's
 * finaliser so that ids differing in one character spread over the whole range. Not sha256: it
 * runs for every rule and member at every lease renewal, and needs no resistance to attack.
 */
function score(member: string, rule: string): number {
  let h = 0x811c9dc5;
  const text = `${member}\u0000${rule}`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
