import { afterEach, describe, expect, it } from 'vitest';
import type { FleetRequest } from '../../../src/store/pg/fleet-requests.js';
import type { OpsFleet } from '../../../src/runtime/ops/ops-fleet.js';
import { journalRoutes } from '../../../src/runtime/ops/journal-routes.js';
import { ReloadHistory } from '../../../src/runtime/ops/reload-history.js';
import { ruleRoutes } from '../../../src/runtime/ops/rule-routes.js';
import type { RuleRows } from '../../../src/runtime/ops/rule-rows.js';
import { storeQueries } from '../../../src/store/store-queries.js';
import { botFixture, NOTE_RULES, recordingLogger, rules, type BotFixture } from '../bot-fixture.js';

// A fleet member's actions on a rule (pause, resume, run-slot): carried out here once the bot
// runs the rule; posted for the owner (and recorded fleet-wide) when another member runs it or
// this member's bot is still starting, where the bot itself would refuse (503 NOT_RUNNING) an
// action the fleet can keep.

let f: BotFixture | undefined;
afterEach(async () => {
  await f?.cleanup();
  f = undefined;
});

function recordingFleet(
  owner: string,
  fx?: BotFixture,
): OpsFleet & {
  posted: FleetRequest[];
  paused: [string, boolean][];
} {
  const posted: FleetRequest[] = [];
  const paused: [string, boolean][] = [];
  return {
    posted,
    paused,
    status: () => Promise.resolve({}),
    forward: (request) => {
      posted.push(request);
      return Promise.resolve(request.ruleId === 'no-such-rule' ? undefined : { owner });
    },
    rule: (ruleId) => fx?.bot.rules.rules.find((r) => r.id === ruleId),
    setPaused: (ruleId, p) => {
      paused.push([ruleId, p]);
      return Promise.resolve();
    },
  };
}

function pauseRoute(fx: BotFixture, fleet: OpsFleet) {
  const rows: RuleRows = { rows: () => [], close: () => undefined };
  const route = ruleRoutes({
    bot: fx.bot,
    rows,
    reloads: new ReloadHistory(fx.clock),
    fleet,
  }).find((r) => r.method === 'POST' && r.pattern.test('/rules/x/pause'))!;
  return (id: string, action: 'pause' | 'resume') =>
    route.handle([id, action], new URL(`http://h/rules/${id}/${action}`), {} as never);
}

describe('the ops API on a fleet member: pause and resume', () => {
  it('posts the action of a rule whose bot has not started yet, recorded fleet-wide, with 202', async () => {
    f = botFixture();
    const fleet = recordingFleet('member-a');
    const handle = pauseRoute(f, fleet);
    expect(f.bot.state).toBe('created');
    await expect(handle('accept', 'pause')).resolves.toEqual({
      status: 202,
      body: { forwarded: { kind: 'pause', ruleId: 'accept', owner: 'member-a' } },
    });
    expect(fleet.posted).toEqual([{ kind: 'pause', ruleId: 'accept' }]);
    expect(fleet.paused).toEqual([['accept', true]]);
    expect(f.bot.ruleStatus().find((r) => r.id === 'accept')?.state).toBe('active');
  });

  it('carries out the action here once the bot runs, and records it fleet-wide', async () => {
    f = botFixture();
    f.ledger.end = 3;
    await f.bot.start();
    const fleet = recordingFleet('member-a');
    const handle = pauseRoute(f, fleet);
    const answer = await handle('accept', 'pause');
    expect(answer.status).toBe(200);
    expect(fleet.posted).toEqual([]);
    expect(fleet.paused).toEqual([['accept', true]]);
    expect(f.bot.ruleStatus().find((r) => r.id === 'accept')?.state).toBe('paused');
  });

  it('answers 404 for a rule the fleet does not have, and records no pause', async () => {
    f = botFixture();
    const fleet = recordingFleet('member-a');
    const handle = pauseRoute(f, fleet);
    await expect(handle('no-such-rule', 'pause')).rejects.toMatchObject({ status: 404 });
    expect(fleet.paused).toEqual([]);
  });

  it('posts a run-slot of its own schedule rule while its bot starts, and runs none here', async () => {
    f = botFixture({ rules: rules(NOTE_RULES) });
    const fx = f;
    const fleet = recordingFleet('member-a', fx);
    let ranHere = 0;
    const route = journalRoutes({
      bot: fx.bot,
      store: fx.store,
      queries: storeQueries(fx.store),
      clock: fx.clock,
      log: recordingLogger(),
      runSlot: () => {
        ranHere += 1;
        return Promise.reject(new Error('not here'));
      },
      fleet,
    }).find((r) => r.method === 'POST' && r.pattern.test('/rules/x/run-slot'))!;
    const at = '2026-01-05T09:00:00.000Z'; // the fixture's now: a later one is refused
    const answer = await route.handle(
      ['note'],
      new URL(`http://h/rules/note/run-slot?at=${at}`),
      {} as never,
    );
    expect(answer).toEqual({
      status: 202,
      body: { forwarded: { kind: 'run-slot', ruleId: 'note', at, owner: 'member-a' } },
    });
    expect(fleet.posted).toEqual([{ kind: 'run-slot', ruleId: 'note', at: Date.parse(at) }]);
    expect(ranHere).toBe(0);
  });
});
