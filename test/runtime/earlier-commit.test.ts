import { afterEach, describe, expect, it } from 'vitest';
import { parseJsCantonError } from '../../src/ledger/js-canton-error.js';
import { LedgerApiError } from '../../src/ledger/ledger-api-error.js';
import { LedgerTransportError } from '../../src/ledger/ledger-transport-error.js';
import { contractIdsToCheck } from '../../src/runtime/earlier-commit.js';
import { cantonError } from '../ledger/samples.js';
import { apiError } from './fake-ledger.js';
import {
  completionOf,
  INVOICE_CID,
  lostResponse,
  newIntent,
  payload,
  PAYER,
  trackerFixture,
  type TrackerFixture,
} from './tracker-fixture.js';

let f: TrackerFixture;
afterEach(() => f.cleanup());

/**
 * What a 3.5 participant answers a resubmitted consuming exercise whose input is archived: it
 * interprets before it deduplicates (NOTES.md, Corrections), so 404 CONTRACT_NOT_FOUND naming
 * the contract, in the resource form errors from gRPC carry.
 */
function contractNotFound(contractId = INVOICE_CID, type = 'ErrorResource(CONTRACT_ID)') {
  const body = {
    ...cantonError(
      'CONTRACT_NOT_FOUND',
      11,
      5,
      `Contract could not be found with id ${contractId}`,
    ),
    resources: [[type, contractId]],
  };
  return (): never => {
    throw new LedgerApiError(parseJsCantonError(body)!, 'POST /v2/commands/async/submit', 404);
  };
}

const lookupDown = (): LedgerTransportError =>
  new LedgerTransportError('reset', 'POST /v2/events/events-by-contract-id', 'socket hang up');

const states = (fx: TrackerFixture): string[] => fx.events.map((e) => e.to);

describe('SubmissionTracker: a contention error after an earlier attempt committed', () => {
  it('lost response, resubmit, CONTRACT_NOT_FOUND: the archiving update carries our commandId -> succeeded', async () => {
    f = trackerFixture();
    // Canton's form: absent optionals are null, not missing.
    f.ledger.nullForAbsent = true;
    f.ledger.submitScript.push(lostResponse, contractNotFound());
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    f.ledger.archivedBy.set(INVOICE_CID, {
      offset: 57,
      commandId: 'lb-accept-40',
      updateId: 'tx-ours',
    });
    await f.track(newIntent(40));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-40').state).toBe('pending');
    await f.clock.advance(1_000);
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.intent('lb-accept-40')).toMatchObject({
      state: 'succeeded',
      completionOffset: 57,
      completionUpdateId: 'tx-ours',
      attempts: 2,
    });
    expect(states(f)).toEqual(['submitted', 'pending', 'submitted', 'succeeded']);
    // The archiving transaction was read at the archive's offset, for the intent's parties.
    expect(f.ledger.updateLookups).toHaveLength(1);
    expect(f.ledger.updateLookups[0]!.offset).toBe(57);
    expect(
      Object.keys(
        f.ledger.updateLookups[0]!.updateFormat.includeTransactions?.eventFormat?.filtersByParty ??
          {},
      ),
    ).toEqual([PAYER]);
    expect(f.metrics.earlierCommitsFound).toBe(1);
    expect(f.admission.inFlight).toBe(0);
    await f.clock.advance(60_000);
    expect(f.ledger.submits).toHaveLength(2);
  });

  it('the archiving update is another command -> rejected not-needed, naming it', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(lostResponse, contractNotFound());
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    f.ledger.archivedBy.set(INVOICE_CID, {
      offset: 58,
      commandId: 'someone-elses-command',
      updateId: 'tx-theirs',
    });
    await f.track(newIntent(41));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.intent('lb-accept-41').state).toBe('rejected');
    expect(f.intent('lb-accept-41').lastError).toMatchObject({
      code: 'CONTRACT_NOT_FOUND',
      reason: 'not-needed',
      contractId: INVOICE_CID,
      archivedBy: { updateId: 'tx-theirs', offset: 58 },
    });
    expect(f.metrics.earlierCommitsFound).toBe(0);
    expect(f.store.getDeadLetter('lb-accept-41')).toBeUndefined();
  });

  it('when the lookup fails, retries rather than rejecting, and settles once the lookup answers', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(lostResponse, contractNotFound(), contractNotFound());
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    f.ledger.archivedBy.set(INVOICE_CID, { offset: 59, commandId: 'lb-accept-42' });
    f.ledger.lookupErrors.push(lookupDown());
    await f.track(newIntent(42));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    // Attempt 2 got CONTRACT_NOT_FOUND; the lookup failed: not rejected, a retry is due.
    const after = f.intent('lb-accept-42');
    expect(after.state).toBe('pending');
    expect(after.lastError).toMatchObject({ code: 'CONTRACT_NOT_FOUND' });
    expect(f.ledger.updateLookups).toHaveLength(0);
    await f.clock.advance(after.nextAttemptAt! - f.clock.now());
    expect(f.ledger.submits).toHaveLength(3);
    expect(f.intent('lb-accept-42')).toMatchObject({
      state: 'succeeded',
      completionOffset: 59,
      completionUpdateId: 'tx-59',
    });
    expect(states(f)).not.toContain('rejected');
  });

  it('when reading the archiving update fails, retries rather than rejecting', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(contractNotFound(), contractNotFound());
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    f.ledger.archivedBy.set(INVOICE_CID, { offset: 60, commandId: 'lb-accept-43' });
    // The events lookup answers; the update read fails with a transient error once.
    const read = f.ledger.updateByOffset.bind(f.ledger);
    let failures = 1;
    f.ledger.updateByOffset = (req) =>
      failures-- > 0
        ? Promise.reject(apiError('SERVICE_NOT_RUNNING', 1, 14, 'starting', {}, 503))
        : read(req);
    await f.track(newIntent(43));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-43').state).toBe('pending');
    await f.clock.advance(f.intent('lb-accept-43').nextAttemptAt! - f.clock.now());
    expect(f.ledger.submits).toHaveLength(2);
    expect(f.intent('lb-accept-43')).toMatchObject({ state: 'succeeded', completionOffset: 60 });
    expect(states(f)).not.toContain('rejected');
  });

  it('a restart with a `submitted` intent: resubmitted, CONTRACT_NOT_FOUND, the earlier run committed -> succeeded', async () => {
    f = trackerFixture();
    const [record] = f.store.recordIntents([newIntent(44)]).inserted;
    f.store.transition(record!.commandId, { to: 'submitted', submissionId: 'from-last-run' });
    f.ledger.submitScript.push(contractNotFound());
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    f.ledger.archivedBy.set(INVOICE_CID, { offset: 61, commandId: 'lb-accept-44' });
    const permit = await f.admission.acquire('accept', 4);
    f.tracker.track(f.intent('lb-accept-44'), permit);
    await f.clock.advance(0);
    expect(f.ledger.submits).toHaveLength(1);
    expect(f.intent('lb-accept-44')).toMatchObject({
      state: 'succeeded',
      completionOffset: 61,
      completionUpdateId: 'tx-61',
      attempts: 2,
    });
  });

  it("a twin replica's commit (same commandId, never submitted by this process) -> succeeded", async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(contractNotFound(INVOICE_CID, 'CONTRACT_ID'));
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    f.ledger.archivedBy.set(INVOICE_CID, {
      offset: 62,
      commandId: 'lb-accept-45',
      updateId: 'tx-twin',
    });
    await f.track(newIntent(45));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-45')).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      completionOffset: 62,
      completionUpdateId: 'tx-twin',
    });
  });

  it('LOCAL_VERDICT_INACTIVE_CONTRACTS in a completion after our own earlier attempt committed -> succeeded', async () => {
    f = trackerFixture({ completionTimeoutMs: 3_000 });
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    f.ledger.archivedBy.set(INVOICE_CID, { offset: 63, commandId: 'lb-accept-46' });
    await f.track(newIntent(46));
    await f.clock.advance(0);
    // The first attempt's completion was dropped; at the timeout the command is resubmitted
    // while the first is still being confirmed, and its completion reports the inputs inactive.
    await f.clock.advance(3_000);
    expect(f.ledger.submits).toHaveLength(2);
    f.tracker.onCompletion(
      completionOf(f.ledger.submits[1]!, 64, {
        code: 'LOCAL_VERDICT_INACTIVE_CONTRACTS',
        category: 11,
        grpc: 5,
        cause: 'inactive contracts',
        definiteAnswer: true,
      }),
      64,
    );
    await f.clock.advance(0);
    expect(f.intent('lb-accept-46')).toMatchObject({ state: 'succeeded', completionOffset: 63 });
    expect(states(f)).toEqual(['submitted', 'submitted', 'succeeded']);
  });

  it('a success completion arriving while the lookup is out settles it, and the lookup changes nothing', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(lostResponse, contractNotFound());
    f.ledger.contracts.set(INVOICE_CID, 'archived');
    let open!: () => void;
    f.ledger.lookupGate = new Promise<void>((resolve) => (open = resolve));
    await f.track(newIntent(47));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.ledger.lookups).toHaveLength(1);
    expect(f.tracker.busy).toBe(1);
    // The first (lost) attempt's completion: a success, whatever its submissionId.
    f.tracker.onCompletion(completionOf(f.ledger.submits[0]!, 65), 65);
    expect(f.intent('lb-accept-47')).toMatchObject({ state: 'succeeded', completionOffset: 65 });
    open();
    await f.clock.advance(0);
    // The lookup would have said "another command" (the fake's default): it is ignored.
    expect(f.intent('lb-accept-47')).toMatchObject({
      state: 'succeeded',
      completionUpdateId: 'tx-65',
    });
    expect(states(f)).toEqual(['submitted', 'pending', 'submitted', 'succeeded']);
  });

  it('an intent in doubt whose contract the participant pruned is dead-lettered, not rejected', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(lostResponse, contractNotFound());
    // The contract's events are gone (unknown to the participant), and it pruned past offset 49.
    f.ledger.prunedUpTo = 80;
    await f.track(newIntent(49));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.intent('lb-accept-49').state).toBe('dead-lettered');
    expect(f.store.getDeadLetter('lb-accept-49')?.error).toMatchObject({
      code: 'EARLIER_COMMIT_UNKNOWN',
      reason: 'final',
    });
    expect(states(f)).not.toContain('rejected');
  });

  it('a contract unknown without pruning, or to an intent never in doubt, is rejected not-needed', async () => {
    f = trackerFixture();
    f.ledger.submitScript.push(lostResponse, contractNotFound());
    await f.track(newIntent(50));
    await f.clock.advance(0);
    await f.clock.advance(1_000);
    expect(f.intent('lb-accept-50').lastError).toMatchObject({ reason: 'not-needed' });
    // Every attempt definitely refused: no attempt of ours can have committed, pruned or not.
    f.ledger.prunedUpTo = 80;
    f.ledger.submitScript.push(contractNotFound());
    await f.track(newIntent(51));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-51')).toMatchObject({ state: 'rejected' });
  });

  it('still retries when every contract is active (null-for-absent wire form)', async () => {
    f = trackerFixture();
    f.ledger.nullForAbsent = true;
    f.ledger.contracts.set(INVOICE_CID, 'active');
    f.ledger.submitScript.push(contractNotFound());
    await f.track(newIntent(48));
    await f.clock.advance(0);
    expect(f.intent('lb-accept-48').state).toBe('pending');
    expect(f.ledger.updateLookups).toHaveLength(0);
  });
});

describe('contractIdsToCheck', () => {
  it('reads CONTRACT_ID resources in both forms, and the exercised contracts', () => {
    for (const type of ['CONTRACT_ID', 'ErrorResource(CONTRACT_ID)']) {
      const body = {
        ...cantonError('CONTRACT_NOT_FOUND', 11, 5, 'not found'),
        resources: [
          [type, '00other'],
          ['ErrorResource(TEMPLATE_ID)', 'pkg:M:T'],
        ],
      };
      const err = new LedgerApiError(parseJsCantonError(body)!, 'POST /x', 404);
      expect(contractIdsToCheck(payload(), err)).toEqual(['00other', INVOICE_CID]);
    }
  });
});
