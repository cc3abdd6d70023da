/**
 * The console (docs/console.md) in a real browser: headless Chromium against the ops server of a
 * bot on the sandbox. The page signs in with the token, lists the rules, shows intents as they
 * happen, pauses and resumes a rule, retries and drops dead letters, shows a hostile contract
 * field as text, and hides its buttons when the server is read-only.
 *
 * Screenshots of the overview and the rules go to docs/ with UPDATE_SCREENSHOTS=1, else to a
 * temporary directory (the tests never change the tree).
 */
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandLabel } from '../../console/src/format.js';
import { loadRulesOrThrow } from '../../src/rules/load-rules.js';
import type { OpsServer } from '../../src/runtime/ops/ops-server.js';
import {
  countContracts,
  issueInvoices,
  ROOT,
  startBotOps,
  startInProcessBot,
  startTestLedger,
  waitFor,
  type InProcessBot,
  type TestLedger,
} from '../integration/harness.js';
import { TestScope } from '../support/test-scope.js';
import { chromiumSkipReason, launchChromium } from './chromium.js';

const TOKEN = 'console-test-token-3f9a';
const HOSTILE = '<img src=x onerror=alert(1)>';
const WAIT = 20_000;
/** A test's own bound: longer than any one wait in it, so a timeout names what it waited for. */
const TEST = 60_000;

const RULE_FILES = [
  {
    path: 'rules/accept-small-invoices.yaml',
    text: `version: 1
rules:
  - id: accept-small-invoices
    description: The payer accepts invoices under 1000 USD
    on: { created: '#invoices:Invoice:Invoice', party: payer }
    when:
      - event.createArgument.currency == "USD"
      - decimal(event.createArgument.amount) < decimal("1000")
    then:
      - createAndExercise:
          template: '#invoices:Automation:InvoiceAcceptor'
          createArguments: { payer: '\${{ parties.payer }}' }
          choice: AcceptInvoice
          choiceArgument: { invoice: '\${{ event.contractId }}' }
        actAs: [payer]
    retry: { maxAttempts: 20, initialDelay: 20ms, maxDelay: 200ms, deadline: 2m }
`,
  },
  {
    path: 'rules/audit-invoices.yaml',
    text: `version: 1
rules:
  - id: audit-invoices
    description: The issuer keeps an audit record of every invoice
    on: { created: '#invoices:Invoice:Invoice', party: issuer }
    then:
      - create:
          template: '#audit:Audit:Seen'
          createArguments:
            owner: '\${{ parties.issuer }}'
            reference: '\${{ event.createArgument.reference }}'
            amount: '\${{ event.createArgument.amount }}'
        actAs: [issuer]
    retry: { maxAttempts: 2, initialDelay: 20ms, maxDelay: 50ms, deadline: 2m }
`,
  },
  {
    path: 'rules/settle-payments.yaml',
    text: `version: 1
rules:
  - id: settle-accepted-invoices
    description: The issuer settles the payment of an accepted invoice
    on:
      exercised: { template: '#invoices:Invoice:Invoice', choice: Accept, consuming: true }
      party: issuer
    then:
      - exercise:
          template: '#invoices:Payment:Payment'
          contractId: '\${{ event.exerciseResult }}'
          choice: Settle
        actAs: [issuer]
    retry: { maxAttempts: 20, initialDelay: 20ms, maxDelay: 200ms, deadline: 2m }
`,
  },
];
const RULE_IDS = ['accept-small-invoices', 'audit-invoices', 'settle-accepted-invoices'];

const skipReason = chromiumSkipReason();

describe.skipIf(skipReason !== undefined)(
  `the console in Chromium${skipReason === undefined ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    const scope = new TestScope();
    let ledger: TestLedger;
    let bot: InProcessBot;
    let ops: OpsServer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let shots: string;
    /** What `POST /rules/reload` loads (the CLI re-reads the files; here they are in memory). */
    let reloadFiles = RULE_FILES;
    const dialogs: string[] = [];
    const pageErrors: string[] = [];

    /** The ops API as a script calls it, with the bearer token. */
    const api = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${ops.url}${path}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.ok, `${path}: ${res.status}`).toBe(true);
      return (await res.json()) as T;
    };
    /** Audit records on the ledger: one per invoice the audit rule handled. */
    const seen = async (): Promise<number> => (await countContracts(ledger)).seen;
    /** The bot has read the ledger up to its end (so a rule that did not fire had its chance). */
    const caughtUp = async (): Promise<void> => {
      const end = await ledger.client.ledgerEnd();
      await waitFor(
        () => bot.bot.processedOffset() ?? -1,
        (o) => o >= end,
        WAIT,
        `the bot to process up to offset ${end}`,
      );
    };
    const ruleRow = (id: string) => page.getByTestId(`rule-${id}`);
    /** A screenshot of the page as it is, without the notices of earlier actions. */
    const shot = async (name: string): Promise<void> => {
      await page.evaluate("document.getElementById('notices').replaceChildren()");
      await page.screenshot({ path: join(shots, `console-${name}.png`) });
    };

    beforeAll(async () => {
      ledger = scope.own(await startTestLedger(71));
      const rules = loadRulesOrThrow(RULE_FILES, { parties: ledger.parties });
      bot = scope.own(
        await startInProcessBot(ledger, {
          stateDir: scope.tempDir(),
          seed: 71,
          rules,
          start: { kind: 'begin' },
        }),
      );
      ops = scope.own(
        await startBotOps(bot, {
          token: TOKEN,
          processMetrics: false,
          explain: { ledger: bot.client, parties: ledger.parties },
          reload: () =>
            Promise.resolve({
              applied: true as const,
              diff: bot.bot.reloadRules(loadRulesOrThrow(reloadFiles, { parties: ledger.parties })),
            }),
        }),
      );
      shots = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs') : scope.tempDir();
      browser = scope.defer(await launchChromium(), () => browser.close());
      context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      page = await context.newPage();
      // An action or wait that cannot happen fails within a test's bound, naming its target.
      page.setDefaultTimeout(WAIT);
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      page.on('pageerror', (e) => pageErrors.push(e.message));
      page.on('console', (m) => {
        // A refused request (the wrong token) is logged by Chromium as an error; anything else
        // (a script error, a CSP violation) is a defect.
        if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) {
          pageErrors.push(m.text());
        }
      });
    }, 60_000);

    afterAll(async () => {
      await scope.close();
    }, 60_000);

    it(
      'refuses a request without the token, and the page signs in with it',
      async () => {
        const bare = await fetch(`${ops.url}/status`);
        expect(bare.status).toBe(401);
        await bare.body?.cancel();
        const wrong = await fetch(`${ops.url}/status`, {
          headers: { authorization: 'Bearer not-the-token' },
        });
        expect(wrong.status).toBe(401);
        await wrong.body?.cancel();

        const res = await page.goto(`${ops.url}/`);
        expect(res?.status()).toBe(200);
        const csp = res?.headers()['content-security-policy'] ?? '';
        expect(csp).toContain("script-src 'self'");
        expect(csp).not.toContain('unsafe-inline');

        await page.getByTestId('token').fill('not-the-token');
        await page.getByTestId('login').click();
        await expect
          .poll(() => page.getByTestId('login-error').textContent(), { timeout: WAIT })
          .toContain('not right');
        await page.getByTestId('token').fill(TOKEN);
        await page.getByTestId('login').click();
        await page.getByTestId('tab-rules').waitFor({ timeout: WAIT });
        // The session is an HttpOnly cookie; the token itself is nowhere in the browser.
        const cookies = await context.cookies();
        expect(cookies.map((c) => c.name)).toEqual(['ledgerbot_session']);
        expect(cookies[0]!.httpOnly).toBe(true);
        expect(JSON.stringify(cookies)).not.toContain(TOKEN);
        const stored = await page.evaluate<string>(
          'JSON.stringify({ ...localStorage, ...sessionStorage })',
        );
        expect(stored).not.toContain(TOKEN);

        // The cookie alone does not change anything from another site, nor without an Origin.
        const cookie = `${cookies[0]!.name}=${cookies[0]!.value}`;
        for (const headers of [{ cookie, origin: 'http://evil.example' }, { cookie }]) {
          const r = await fetch(`${ops.url}/rules/audit-invoices/pause`, {
            method: 'POST',
            headers,
          });
          expect(r.status).toBe(403);
          await r.body?.cancel();
        }
        expect(bot.bot.ruleStatus().find((r) => r.id === 'audit-invoices')?.state).toBe('active');
      },
      TEST,
    );

    it(
      'lists the rules with their triggers and states',
      async () => {
        await page.goto(`${ops.url}/#rules`);
        for (const id of RULE_IDS) {
          await ruleRow(id).waitFor({ timeout: WAIT });
          await expect.poll(() => ruleRow(id).getByTestId('state').textContent()).toBe('active');
        }
        const audit = (await ruleRow('audit-invoices').textContent()) ?? '';
        expect(audit).toContain('The issuer keeps an audit record of every invoice');
        expect(audit).toContain('created');
        expect(audit).toContain('Invoice:Invoice');
        expect(audit).toContain('audit-invoices.yaml:3');
        expect(await ruleRow('audit-invoices').getByTestId('source').getAttribute('title')).toBe(
          'rules/audit-invoices.yaml:3',
        );
        expect(await ruleRow('settle-accepted-invoices').textContent()).toContain('Accept');
      },
      TEST,
    );

    it(
      'shows an intent live, without reloading, once a contract is created',
      async () => {
        await page.goto(`${ops.url}/#intents`);
        await page.getByTestId('intents').waitFor({ timeout: WAIT });
        await page.evaluate("window.marker = 'same page'");
        const rows = page.getByTestId('intent-row');
        expect(await rows.count()).toBe(0);
        await issueInvoices(ledger, [
          { reference: 'L-1', amount: '120.00', currency: 'USD' },
          { reference: 'L-2', amount: '80.00', currency: 'USD' },
          { reference: 'L-3', amount: '4500.00', currency: 'USD' },
          { reference: 'L-4', amount: '30.00', currency: 'CHF' },
        ]);
        // Four audit records, two acceptances and their settlements: eight intents.
        await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(8);
        await expect
          .poll(() => rows.filter({ hasText: 'audit-invoices' }).count(), { timeout: WAIT })
          .toBe(4);
        await expect
          .poll(() => rows.filter({ hasText: 'succeeded' }).count(), { timeout: WAIT })
          .toBe(8);
        expect(await page.evaluate<string>('window.marker')).toBe('same page');
        // Carried by the event stream: the page falls back to polling only when it is silent.
        expect(await page.getByTestId('connection').textContent()).toContain('live');

        // The filters ask the server: one rule, one state.
        await page.getByTestId('filter-rule').selectOption('settle-accepted-invoices');
        await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(2);
        await page.getByTestId('filter-state').selectOption('rejected');
        await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(0);
        await expect
          .poll(() => page.getByTestId('intents').textContent())
          .toContain('No intents match these filters.');

        await page.getByTestId('filter-state').selectOption('');
        await page.getByTestId('filter-rule').selectOption('');
        await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(8);
        await shot('intents');

        // One intent: its trigger, command and attempts; then why its rule fired.
        await rows.filter({ hasText: 'audit-invoices' }).first().locator('a').click();
        await expect
          .poll(() => page.getByTestId('attempts-table').textContent(), { timeout: WAIT })
          .toContain('succeeded');
        expect(await page.getByTestId('intents').locator('pre.code').textContent()).toContain(
          '#audit:Audit:Seen',
        );
        await shot('intent');
        await page.getByRole('link', { name: 'why?' }).click();
        const audit = page.getByTestId('why-rule').filter({ hasText: 'audit-invoices' });
        await expect.poll(() => audit.textContent(), { timeout: WAIT }).toContain('fires');
        await shot('why');
        // An update the ledger does not have is said so, in place of the explanation.
        await page.getByTestId('why-input').fill('1220deadbeef');
        await page.getByTestId('why-submit').click();
        await expect
          .poll(() => page.getByTestId('why').getByRole('alert').textContent(), { timeout: WAIT })
          .toContain('NOT_FOUND');

        await page.goto(`${ops.url}/#overview`);
        await expect
          .poll(() => page.getByTestId('intent-counts').textContent(), { timeout: WAIT })
          .toContain('8succeeded');
        await page.getByTestId('sparkline').waitFor({ timeout: WAIT });
        await shot('overview');
      },
      TEST,
    );

    it(
      'shows a contract field holding markup as text, and runs none of it',
      async () => {
        await issueInvoices(ledger, [{ reference: HOSTILE, amount: '15.00', currency: 'CHF' }]);
        const { intents } = await waitFor(
          () => api<{ intents: { commandId: string }[] }>('/intents?ruleId=audit-invoices&limit=1'),
          (b) => b.intents.length > 0,
          WAIT,
          'the audit intent of the hostile invoice',
        );
        const detail = await api<{ intent: { command?: unknown } }>(
          `/intents/${encodeURIComponent(intents[0]!.commandId)}`,
        );
        expect(JSON.stringify(detail.intent.command)).toContain('onerror');

        await page.goto(`${ops.url}/#intents/${encodeURIComponent(intents[0]!.commandId)}`);
        const command = page.getByTestId('intents').locator('pre.code');
        await expect.poll(() => command.textContent(), { timeout: WAIT }).toContain(HOSTILE);
        expect(await page.locator('img').count()).toBe(0);
        expect(await page.locator('[onerror]').count()).toBe(0);
        expect(dialogs).toEqual([]);

        // A bidi override shows as itself, not as reversed text; a 20 KB value wraps in place.
        const spoof = `RTL \u202Egnp.exe\u202C end ${'x'.repeat(20_000)}`;
        await issueInvoices(ledger, [{ reference: spoof, amount: '16.00', currency: 'CHF' }]);
        const long = await waitFor(
          () => api<{ intents: { commandId: string }[] }>('/intents?ruleId=audit-invoices&limit=1'),
          (b) => b.intents[0]?.commandId !== intents[0]!.commandId,
          WAIT,
          'the audit intent of the long invoice',
        );
        await page.goto(`${ops.url}/#intents/${encodeURIComponent(long.intents[0]!.commandId)}`);
        await expect
          .poll(() => command.textContent(), { timeout: WAIT })
          .toContain('RTL ⟨U+202E⟩gnp.exe⟨U+202C⟩ end');
        expect(await command.textContent()).not.toContain('\u202E');
        const widths = await page.evaluate<{ page: number; view: number }>(
          '({ page: document.documentElement.scrollWidth, view: window.innerWidth })',
        );
        expect(widths.page).toBeLessThanOrEqual(widths.view);
      },
      TEST,
    );

    it(
      'pauses a rule from the page: it stops firing, and resuming catches up',
      async () => {
        await page.goto(`${ops.url}/#rules`);
        await page.getByTestId('pause-audit-invoices').click();
        await expect
          .poll(() => ruleRow('audit-invoices').getByTestId('state').textContent(), {
            timeout: WAIT,
          })
          .toBe('paused');
        expect(bot.bot.ruleStatus().find((r) => r.id === 'audit-invoices')?.state).toBe('paused');

        const before = await seen();
        // A keyboard user's place survives the live updates that re-render the list.
        await page.getByTestId('resume-audit-invoices').focus();
        const fired = await ruleRow('settle-accepted-invoices').getByTestId('fired').textContent();
        await issueInvoices(ledger, [{ reference: 'P-1', amount: '25.00', currency: 'CHF' }]);
        await issueInvoices(ledger, [{ reference: 'P-0', amount: '26.00', currency: 'USD' }]);
        await caughtUp();
        await expect
          .poll(() => ruleRow('settle-accepted-invoices').getByTestId('fired').textContent(), {
            timeout: WAIT,
          })
          .not.toBe(fired);
        expect(
          await page.evaluate<string | null>(
            "document.activeElement && document.activeElement.getAttribute('data-testid')",
          ),
        ).toBe('resume-audit-invoices');
        expect(await seen()).toBe(before);
        await shot('rules');

        await page.getByTestId('resume-audit-invoices').click();
        await waitFor(
          seen,
          (n) => n === before + 2,
          WAIT,
          'the audit records of P-1 and P-0 after resuming',
        );
        await expect
          .poll(() => ruleRow('audit-invoices').getByTestId('state').textContent(), {
            timeout: WAIT,
          })
          .toBe('active');
      },
      TEST,
    );

    it(
      'retries a dead letter from the page, and drops one after a confirmation',
      async () => {
        // Two invoices the audit rule cannot submit (every submission refused): two dead letters.
        bot.bot.pauseRule('audit-invoices');
        await issueInvoices(ledger, [
          { reference: 'D-1', amount: '10.00', currency: 'CHF' },
          { reference: 'D-2', amount: '20.00', currency: 'CHF' },
        ]);
        await ledger.faults({ submitErrors: [{ code: 'SEQUENCER_BACKPRESSURE', rate: 1 }] });
        try {
          bot.bot.resumeRule('audit-invoices');
          await waitFor(
            () => bot.states()['dead-lettered'],
            (n) => n === 2,
            WAIT,
            'two dead letters',
          );
        } finally {
          await ledger.clearFaults();
        }
        const before = await seen();

        await page.goto(`${ops.url}/#dead-letters`);
        const rows = page.getByTestId('dead-letter-row');
        await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(2);
        // Newest first, as docs/console.md says (the API's default is oldest first).
        const { deadLetters } = await api<{ deadLetters: { commandId: string }[] }>(
          '/dead-letters',
        );
        expect(await rows.first().textContent()).toContain(
          commandLabel(deadLetters[1]!.commandId, 'audit-invoices'),
        );
        expect(await rows.first().textContent()).toContain('SEQUENCER_BACKPRESSURE');
        await shot('dead-letters');
        await rows.first().getByTestId('retry').click();
        await waitFor(seen, (n) => n === before + 1, WAIT, 'the retried audit record');
        await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(1);

        await rows.first().getByTestId('drop').click();
        await page.getByTestId('confirm-cancel').click();
        expect(await rows.count()).toBe(1);
        await rows.first().getByTestId('drop').click();
        await page.getByTestId('confirm-ok').click();
        await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(0);
        await expect
          .poll(() => page.getByTestId('dead-letters').textContent())
          .toContain('No dead letters.');
        expect(bot.states()['dead-lettered']).toBe(0);
        await expect
          .poll(() => page.getByTestId('tab-dead-letters').innerText(), { timeout: WAIT })
          .toBe('Dead letters');
        expect(await seen()).toBe(before + 1);
      },
      TEST,
    );

    it(
      'reloads the rules from the page and shows what changed',
      async () => {
        await page.goto(`${ops.url}/#reload`);
        await page.getByTestId('reload-rules').waitFor({ timeout: WAIT });
        expect(await page.getByTestId('reload').textContent()).toContain(
          'No reload since the bot started.',
        );
        reloadFiles = RULE_FILES.map((f) => ({
          ...f,
          text: f.text.replace(
            'an audit record of every invoice',
            'an audit record of every invoice it issues',
          ),
        }));
        await page.getByTestId('reload-now').click();
        const diff = page.getByTestId('reload-diff');
        await expect.poll(() => diff.textContent(), { timeout: WAIT }).toContain('Changed (1)');
        expect(await diff.textContent()).toContain('audit-invoices');
        expect(await diff.textContent()).toContain('2 rule(s) unchanged.');
        await shot('reload');
        expect(bot.bot.rules.rules.find((r) => r.id === 'audit-invoices')?.description).toBe(
          'The issuer keeps an audit record of every invoice it issues',
        );
      },
      TEST,
    );

    it(
      'hides every button when the server is read-only, and the server refuses the calls',
      async () => {
        const readOnly = scope.own(
          await startBotOps(bot, { readOnly: true, processMetrics: false }),
        );
        const viewer = await context.browser()!.newPage();
        try {
          await viewer.goto(`${readOnly.url}/#rules`);
          await viewer.getByTestId('rule-audit-invoices').waitFor({ timeout: WAIT });
          await viewer.getByTestId('read-only').waitFor({ timeout: WAIT });
          expect(await viewer.locator('[data-testid=rules] button').count()).toBe(0);
          await viewer.goto(`${readOnly.url}/#reload`);
          await viewer.getByTestId('reload').locator('h2').waitFor({ timeout: WAIT });
          expect(await viewer.getByTestId('reload-now').count()).toBe(0);
          expect(await viewer.locator('main button:visible').count()).toBe(0);
        } finally {
          await viewer.close();
        }
        const r = await fetch(`${readOnly.url}/rules/audit-invoices/pause`, { method: 'POST' });
        expect(r.status).toBe(403);
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe('READ_ONLY');
      },
      TEST,
    );

    it('ran no script error and broke no content security policy', () => {
      expect(pageErrors).toEqual([]);
      expect(dialogs).toEqual([]);
    });
  },
);
