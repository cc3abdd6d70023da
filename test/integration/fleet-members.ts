import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/free-port.js';
import type { TestScope } from '../support/test-scope.js';
import { spawnBot, writeBotConfig, type ChildBot } from './child-bot.js';
import type { TestLedger } from './harness.js';

/** The fleet tests' lease period: short, so a take-over happens within seconds. */
export const LEASE_MS = 3_000;

export type Member = { bot: ChildBot; port: number };
export type FleetStatus = {
  instanceId: string;
  running: string[];
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

function startMember(scope: TestScope, config: string, port: number): Member {
  const bot = spawnBot(config, { fromSources: true });
  scope.defer(bot, () => bot.kill('SIGKILL'));
  return { bot, port };
}

/** Three `run` processes on `url`'s schema `fleet`, with the fixture rules or `rules`. */
export async function startMembers(
  scope: TestScope,
  ledger: TestLedger,
  url: string,
  rules?: string,
): Promise<Member[]> {
  const members: Member[] = [];
  for (let i = 0; i < 3; i++) {
    const dir = scope.tempDir(`ledgerbot-fleet-${i}-`);
    const port = await freePort();
    const path = writeBotConfig(ledger, dir, {
      stateDir: join(dir, 'state'),
      start: 'begin',
      postgres: { url, schema: 'fleet' },
      ...(rules === undefined ? {} : { rules }),
    });
    appendFileSync(
      path,
      `fleet: { name: invoices, leasePeriod: ${LEASE_MS}ms }\nhttp: { port: ${port} }\n`,
    );
    members.push(startMember(scope, path, port));
  }
  return members;
}
