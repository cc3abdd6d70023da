/**
 * The console's fleet card (docs/console.md) in a real browser: headless Chromium against the
 * ops server of a fleet member (`run` with `fleet:`, its journal and leases in a real
 * PostgreSQL, on the sandbox): the fleet's name, the live members, this member's id and the
 * rules it runs, and no rule left without an owner; and the rules a member's bot is still
 * starting (its participant does not answer), which it holds but does not run yet.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fleetOf, FIXTURE_RULES, startMember } from '../integration/fleet-members.js';
import { startTestLedger, waitFor } from '../integration/harness.js';
import { describeWithPg } from '../support/describe-with-pg.js';
import { withScope, type TestScope } from '../support/test-scope.js';
import { chromiumSkipReason, launchChromium } from './chromium.js';

const WAIT = 30_000;
const skipReason = chromiumSkipReason();

/** The fleet card of the console on `port`, in a fresh Chromium page, and the page's errors. */
async function fleetCard(
  scope: TestScope,
  port: number,
): Promise<{ card: Locator; errors: string[] }> {
  const browser: Browser = scope.defer(await launchChromium(), () => browser.close());
  const page: Page = await browser.newPage();
  page.setDefaultTimeout(WAIT);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`http://127.0.0.1:${port}/`);
  const card = page.getByTestId('fleet');
  await card.waitFor();
  return { card, errors };
}

describeWithPg('the console of a fleet member', (server) => {
  describe.skipIf(skipReason !== undefined)(
    `in Chromium${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`,
    () => {
      it(
        'shows the fleet, its live member and the rules this member runs',
        () =>
          withScope(async (scope) => {
            const url = await server().freshDatabase();
            const ledger = scope.own(await startTestLedger(73));
            const member = await startMember(scope, ledger, url);
            const fleet = await waitFor(
              () => fleetOf(member.port),
              (s) => s?.running.length === FIXTURE_RULES.length,
              90_000,
              'the member running every rule',
            );
            const { card, errors } = await fleetCard(scope, member.port);
            await expect
              .poll(() => card.textContent(), { timeout: WAIT })
              .toContain('1 live member');
            const text = (await card.textContent()) ?? '';
            expect(text).toContain('Fleet invoices');
            expect(text).toContain(fleet!.instanceId);
            expect(text).toContain([...FIXTURE_RULES].sort().join(', '));
            expect(text).toMatch(/Not held\s*none/);
            expect(errors).toEqual([]);
          }),
        150_000,
      );

      it(
        'shows the rules a member holds while its bot is still starting',
        () =>
          withScope(async (scope) => {
            const url = await server().freshDatabase();
            const ledger = scope.own(await startTestLedger(74));
            // Every request waits 3 s: the member joins once the participant answers and takes
            // the rules, and its bot takes several requests more to start.
            await ledger.faults({ httpLatencyMs: 3_000 });
            const member = await startMember(scope, ledger, url);
            const fleet = await waitFor(
              () => fleetOf(member.port),
              (s) => s?.starting?.length === FIXTURE_RULES.length,
              90_000,
              'the member holding every rule while its bot starts',
            );
            expect(fleet!.running).toEqual([]);
            const { card, errors } = await fleetCard(scope, member.port);
            await expect
              .poll(() => card.textContent(), { timeout: WAIT })
              .toContain(`Starting${[...FIXTURE_RULES].sort().join(', ')}`);
            expect(await card.textContent()).toMatch(/Runsno rule/);
            expect(errors).toEqual([]);
          }),
        150_000,
      );
    },
  );
});
