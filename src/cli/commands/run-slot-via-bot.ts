import { systemClock } from '../../core/clock.js';
import type { ManualSlotOutcome } from '../../runtime/ops/manual-slot.js';
import { isTerminal, type IntentState } from '../../store/store.js';
import type { CliIo } from '../cli-io.js';
import { formatSlotIntent } from '../present/slot-intent-text.js';
import { formatForwarded } from '../present/forwarded-text.js';
import {
  expectStatus,
  forwardedTo,
  isNotFound,
  isStatus,
  OpsApiError,
  opsErrorOf,
  type OpsClient,
} from '../ops-client.js';

/** How long the bot may take to run the slot (read the snapshot, record the intents). */
const RUN_TIMEOUT_MS = 120_000;
const POLL_MS = 200;

/** `ManualSlotOutcome` as the ops API sends it (the slot as an ISO time). */
type RunSlotBody = Omit<ManualSlotOutcome, 'slot'> & { readonly slot: string };

/**
 * run-slot through the running bot's ops API (`POST /rules/{id}/run-slot`): the bot runs the
 * slot with its pipeline and its store, so the store keeps a single writer. Then waits, up to
 * `waitMs`, for the listed intents to end (`GET /intents/{commandId}`). A fleet member that does
 * not run the rule forwards the slot to the rule's owner (202): that is said, and nothing is
 * awaited (exit 0). Returns the exit code, or undefined when nothing answers at the API's
 * address (the bot is not running there).
 */
export async function runSlotViaBot(
  client: OpsClient,
  ruleId: string,
  /** Absent: the bot's now (its clock, not this host's, decides which slot is due). */
  at: number | undefined,
  waitMs: number,
  io: CliIo,
): Promise<number | undefined> {
  const query = at === undefined ? '' : `?at=${encodeURIComponent(new Date(at).toISOString())}`;
  const path = `/rules/${encodeURIComponent(ruleId)}/run-slot${query}`;
  let response;
  try {
    response = await client.request('POST', path, RUN_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof OpsApiError && err.failure === 'unreachable') return undefined;
    throw err;
  }
  const forwarded = forwardedTo(response);
  if (forwarded !== undefined) {
    io.out(
      formatForwarded(
        'the slot run was',
        forwarded.owner,
        `by the fleet member at ${client.baseUrl}`,
      ),
    );
    io.out(
      `its outcomes are not awaited here: GET /intents?ruleId=${encodeURIComponent(ruleId)} lists its intents\n`,
    );
    return 0;
  }
  if (!isStatus(response, 200)) {
    const error = opsErrorOf('POST', path, response);
    if (isNotFound(response) && /no endpoint|not available/.test(error.message)) {
      throw new OpsApiError(
        'bad-response',
        `the bot at ${client.baseUrl} runs, but offers no run-slot (a ledgerbot from before it had one): stop the bot and run this again, or upgrade it`,
        { status: 404, apiCode: 'NOT_FOUND' },
      );
    }
    throw error;
  }
  const o = response.body as RunSlotBody;
  io.out(`run by the running bot at ${client.baseUrl}, with its rules and its pipeline\n`);
  for (const intent of o.intents) io.out(formatSlotIntent(intent));
  const lines = [
    `snapshot offset ${o.snapshotOffset}${o.resumed ? ' (resumed)' : ''}: ${o.contracts} contract(s) read, ${o.intentCount} intent(s)`,
    ...o.errors.map((e) => `rule error: ${e}`),
  ];
  if (o.errorCount > o.errors.length) {
    lines.push(`... and ${o.errorCount - o.errors.length} more rule error(s)`);
  }
  if (o.intentCount > o.intents.length) {
    lines.push(
      `(${o.intentCount - o.intents.length} more intent(s) not listed; the outcomes are those of the ${o.intents.length} listed)`,
    );
  }
  io.out(`${lines.join('\n')}\n`);
  const states = await waitForStates(
    client,
    o.intents.map((i) => i.commandId),
    waitMs,
  );
  const counts = new Map<string, number>();
  for (const state of states.values()) counts.set(state, (counts.get(state) ?? 0) + 1);
  io.out(`outcomes: ${[...counts].map(([state, n]) => `${n} ${state}`).join(', ') || 'none'}\n`);
  const bad = [...states.values()].filter((s) => s !== 'succeeded' && s !== 'duplicate');
  return bad.length === 0 ? 0 : 1;
}

/** Polls the intents' states until each is terminal, or `waitMs` passed. */
async function waitForStates(
  client: OpsClient,
  commandIds: readonly string[],
  waitMs: number,
): Promise<Map<string, IntentState | 'unknown'>> {
  const deadline = systemClock.now() + waitMs;
  const states = new Map<string, IntentState | 'unknown'>(commandIds.map((id) => [id, 'unknown']));
  for (;;) {
    for (const [id, state] of states) {
      if (state !== 'unknown' && isTerminal(state)) continue;
      const path = `/intents/${encodeURIComponent(id)}`;
      const r = await client.request('GET', path);
      if (isNotFound(r)) continue;
      const intent = (
        expectStatus(r, 200, 'GET', path) as { intent?: { state?: IntentState } } | null
      )?.intent;
      if (intent?.state !== undefined) states.set(id, intent.state);
    }
    const open = [...states.values()].some((s) => s === 'unknown' || !isTerminal(s));
    if (!open || systemClock.now() >= deadline) return states;
    await systemClock.sleep(Math.min(POLL_MS, Math.max(0, deadline - systemClock.now())));
  }
}
