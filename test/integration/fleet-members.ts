import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/free-port.js';
import { waitFor } from '../support/wait-for.js';
import type { TestScope } from '../support/test-scope.js';
import { spawnBot, writeBotConfig, type ChildBot } from './child-bot.js';
import type { TestLedger } from './harness.js';

/** The fleet tests' lease period: short, so a take-over happens within seconds. */
export const LEASE_MS = 3_000;

/** The ids of the fixture rules a member runs by default, in order. */
export const FIXTURE_RULES = [
  'accept-small-invoices',
  'audit-invoices',
  'settle-accepted-invoices',
];

export type Member = { bot: ChildBot; port: number };
export type FleetStatus = {
  instanceId: string;
  running: string[];
  starting?: string[];
  members: { instanceId: string; live: boolean; rules: number }[];
  owners: { ruleId: string; owner: string | null; generation: number }[];
};

export async function fleetOf(port: number): Promise<FleetStatus | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/status`);
    const body = (await res.json()) as { fleet?: FleetStatus };
    return body.fleet;
  } catch {
    return undefined; // restarting its bot
  }
}

/**
 * One `run` process in the fleet `invoices` on `url`'s schema `fleet`, with its own state
 * directory and ops port: from `start` (default `begin`), with the fixture rules or `rules`.
 */
export async function startMember(
  scope: TestScope,
  ledger: TestLedger,
  url: string,
  options: { start?: string; rules?: string | undefined } = {},
): Promise<Member> {
  const dir = scope.tempDir('ledgerbot-fleet-');
  const port = await freePort();
  const path = writeBotConfig(ledger, dir, {
    stateDir: join(dir, 'state'),
    start: options.start ?? 'begin',
    postgres: { url, schema: 'fleet' },
    ...(options.rules === undefined ? {} : { rules: options.rules }),
  });
  appendFileSync(
    path,
    `fleet: { name: invoices, leasePeriod: ${LEASE_MS}ms }\nhttp: { port: ${port} }\n`,
  );
  const bot = spawnBot(path, { fromSources: true });
  scope.defer(bot, () => bot.kill('SIGKILL'));
  return { bot, port };
}

/** `count` `run` processes on `url`'s schema `fleet`, with the fixture rules or `rules`. */
export async function startMembers(
  scope: TestScope,
  ledger: TestLedger,
  url: string,
  rules?: string,
  count = 3,
): Promise<Member[]> {
  const members: Member[] = [];
  for (let i = 0; i < count; i++) {
    members.push(await startMember(scope, ledger, url, { rules }));
  }
  return members;
}

/**
 * Runs `wait`; if it fails, the error also carries each member's last log lines other than
 * per-intent ones (what its fleet did), so a rare failure can be read from the test's output.
 */
export async function explained<T>(
  member: Member | readonly Member[],
  wait: Promise<T>,
): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    const members: readonly Member[] = Array.isArray(member)
      ? (member as readonly Member[])
      : [member as Member];
    const tail = members
      .map((m, i) => {
        const recent = m.bot.lines
          .filter((l) => l.msg !== 'intent finished' && l.msg !== 'intent state changed')
          .slice(-60)
          .map((l) => {
            const { level: _l, time: _t, pid: _p, hostname: _h, ...rest } = l;
            return JSON.stringify(rest);
          });
        const name = members.length === 1 ? "the member's" : `member ${i} (port ${m.port}):`;
        return `${name} recent log lines:\n${[...recent, ...m.bot.other.slice(-10)].join('\n')}`;
      })
      .join('\n');
    throw new Error(`${(err as Error).message}\n${tail}`, {
      cause: err,
    });
  }
}

/**
 * Waits (90 s at most) until every member runs at least one rule and together they run `rules`
 * distinct ones: the members' statuses then, in the members' order. On a timeout the error
 * carries each member's recent log lines (see `explained`).
 */
export async function rulesSplit(
  members: readonly Member[],
  rules: number,
  what: string,
): Promise<FleetStatus[]> {
  const statuses = await explained(
    members,
    waitFor(
      async () => Promise.all(members.map((m) => fleetOf(m.port))),
      (all) =>
        all.every((s) => s !== undefined && s.running.length >= 1) &&
        new Set(all.flatMap((s) => s!.running)).size === rules,
      90_000,
      what,
    ),
  );
  return statuses as FleetStatus[];
}
