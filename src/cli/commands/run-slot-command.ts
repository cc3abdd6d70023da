import { formatRuleEvaluationError, type Intent } from '../../rules/evaluation-result.js';
import { slotIntentView } from '../../runtime/intent-view.js';
import { ledgerSlotSource } from '../../runtime/ledger-slot-source.js';
import { runOneSlot } from '../../runtime/run-one-slot.js';
import { formatSlot } from '../../schedule/format-slot.js';
import { runSlot, type SlotIntentSink } from '../../schedule/run-slot.js';
import { previousSlot } from '../../schedule/slots-between.js';
import { defineCommand } from '../define-command.js';
import { submissionOptionsOf } from '../compose/bot-options-of-config.js';
import { silentLogger } from '../../core/logger.js';
import { BotCatalogue } from '../compose/bot-catalogue.js';
import { loadConfigRules } from '../compose/load-config-rules.js';
import { openConfigLedger } from '../compose/open-config-ledger.js';
import {
  openConfigStoreForWriting,
  type WritableStore,
} from '../compose/open-store-for-writing.js';
import { opsClientFor } from '../ops-client.js';
import { formatSlotIntent } from '../present/slot-intent-text.js';
import { parseTimeOption } from '../parse-time-option.js';
import { durationOption } from '../cli-options.js';
import { runSlotViaBot } from './run-slot-via-bot.js';
import { readConfig } from '../compose/read-config.js';
import { UsageError } from '../usage-error.js';

export const runSlotCommand = defineCommand({
  name: 'run-slot',
  summary: 'run one slot of a schedule rule now and print its intents (--dry-run: submit nothing)',
  usage: `run-slot --config FILE --rule ID [--at TIME] [--dry-run] [--wait DURATION]`,
  description: `Runs one slot of a schedule rule now: the latest slot at or before TIME (default: now). It
reads the ledger end, the rule's forEach contracts there, evaluates the rule and prints the
intents. Without --dry-run it submits them through the bot's pipeline (journal, retries, dead
letters) with the state store of the config, and waits for their outcomes. Running the same
slot again submits nothing new.

While the bot runs, the slot is run by the bot itself, through its ops API (the config's http
section, with http.token): the bot is the one process that writes its store. A running bot
without http is refused (exit 1): add http, or stop the bot. --dry-run works either way. A fleet
member that does not run the rule forwards the slot to the member that does, which runs it at
its next round; the outcomes are not awaited then.`,
  options: {
    config: { type: 'string', value: 'FILE', help: 'the bot config (required)' },
    rule: { type: 'string', value: 'ID', help: 'the schedule rule (required)' },
    at: {
      type: 'string',
      value: 'TIME',
      help: 'ISO 8601 time with a zone; the slot is the latest at or before it',
    },
    'dry-run': {
      type: 'boolean',
      default: false,
      help: 'print the intents, submit nothing, record nothing',
    },
    wait: {
      type: 'string',
      default: '60s',
      value: 'DURATION',
      help: 'how long to wait for the outcomes, e.g. 30s or 2m (a bare number is milliseconds; default 60s)',
    },
  },
  footer: `Exit status: 0 when every intent succeeded (or was a duplicate), or the slot was forwarded
to the rule's owner in a fleet, 1 when one was rejected, dead-lettered or still open after
--wait, or the slot could not be run (the running bot refused, or a running bot without http
holds the store), 2 for usage and config errors.`,
  run: async ({ values }, io) => {
    if (values.config === undefined) throw new UsageError('--config FILE is required');
    if (values.rule === undefined) throw new UsageError('--rule ID is required');
    // A bare number is milliseconds, as --wait took before it took durations.
    const waitMs = /^\d+$/.test(values.wait)
      ? Number(values.wait)
      : durationOption('--wait', values.wait);
    const now = Date.now();
    const at = values.at === undefined ? now : parseTimeOption('--at', values.at);
    if (at > now) {
      // The slot it runs counts as completed: one still to come would hold the schedule back.
      throw new UsageError(
        `--at ${values.at} is later than now: run-slot runs a slot that is due (the schedule runs the others at their time)`,
      );
    }
    const config = await readConfig(values.config);
    const catalogue = new BotCatalogue(config, silentLogger);
    const ruleSet = await loadConfigRules(config, { catalogue });
    const rule = ruleSet.rules.find((r) => r.id === values.rule);
    if (rule === undefined) {
      const ids = ruleSet.rules.filter((r) => r.trigger.kind === 'schedule').map((r) => r.id);
      throw new UsageError(
        `there is no rule "${values.rule}"; the schedule rules are: ${ids.join(', ') || '(none)'}`,
      );
    }
    const trigger = rule.trigger;
    if (trigger.kind !== 'schedule') {
      throw new UsageError(`rule "${rule.id}" is an event rule, not a schedule rule`);
    }
    const slot = previousSlot(trigger.cronSpec, trigger.timezone, at);
    if (slot === undefined) {
      throw new UsageError(
        `rule "${rule.id}" (${trigger.cron}) has no slot before ${new Date(at).toISOString()}`,
      );
    }
    const dryRun = values['dry-run'] === true;
    let writable: WritableStore | undefined;
    io.out(
      `rule ${rule.id}: slot ${formatSlot(slot, trigger.timezone)} (${new Date(slot).toISOString()})${dryRun ? ', dry run' : ''}\n`,
    );
    if (!rule.enabled) io.out(`note: rule ${rule.id} is disabled, so it fires nothing\n`);

    if (!dryRun) {
      // http.port 0 (a free port at each start): the bot's API cannot be found, only locked out.
      const client = config.http?.port === 0 ? undefined : opsClientFor(config);
      const viaBot =
        client === undefined
          ? undefined
          : await runSlotViaBot(
              client,
              rule.id,
              values.at === undefined ? undefined : at,
              waitMs,
              io,
            );
      if (viaBot !== undefined) return viaBot;
      // No bot answers: this process writes the store, holding its writer lock throughout.
      writable = await openConfigStoreForWriting(config, 'run-slot', {
        httpTried: client !== undefined,
        mustExist: false,
      });
    }
    let ledger;
    try {
      ledger = await openConfigLedger(config, undefined, { packageFiles: catalogue.packageFiles });
    } catch (err) {
      await writable?.close();
      throw err;
    }
    try {
      if (ledger.sandbox !== undefined) {
        io.out('note: the ledger is an embedded sandbox started just now, so it is empty\n');
      }
      // Compiled again against the participant's packages, as the bot compiles it: a forEach
      // over an interface reads the active contracts with an interface filter.
      catalogue.connect(ledger.client);
      const slotRule = catalogue.connected
        ? ((await loadConfigRules(config, { catalogue })).rules.find((r) => r.id === rule.id) ??
          rule)
        : rule;
      const source = ledgerSlotSource(ledger.client);
      const printIntents = (intents: readonly Intent[]): void => {
        for (const intent of intents) io.out(formatSlotIntent(slotIntentView(intent)));
      };
      if (dryRun) {
        const printer: SlotIntentSink = {
          submitIntents: (intents) => Promise.resolve(printIntents(intents)),
        };
        const result = await runSlot(slotRule, slot, {
          source,
          sink: printer,
          parties: ledger.parties,
          packageNameOf: catalogue.packageNameOf,
        });
        io.out(summary(result));
        return 0;
      }
      if (writable === undefined) throw new Error('unreachable: no store for a run-slot');
      const store = writable.store;
      const run = await runOneSlot({
        rule: slotRule,
        slot,
        parties: ledger.parties,
        packageNameOf: catalogue.packageNameOf,
        userId: config.ledger.userId,
        ledger: ledger.client,
        store,
        source,
        submission: submissionOptionsOf(config),
        timeoutMs: waitMs,
        onIntents: printIntents,
        onRecorded: (result) => io.out(summary(result)),
      });
      const counts = new Map<string, number>();
      for (const r of run.outcomes) counts.set(r.state, (counts.get(r.state) ?? 0) + 1);
      io.out(
        `outcomes: ${[...counts].map(([state, n]) => `${n} ${state}`).join(', ') || 'none'}\n`,
      );
      const bad = run.outcomes.filter((r) => r.state !== 'succeeded' && r.state !== 'duplicate');
      return bad.length === 0 ? 0 : 1;
    } finally {
      await writable?.close();
      await ledger.close();
    }
  },
});

function summary(result: Awaited<ReturnType<typeof runSlot>>): string {
  const lines = [
    `snapshot offset ${result.snapshotOffset}${result.resumed ? ' (resumed)' : ''}: ${result.contracts} contract(s) read, ${result.intents} intent(s)`,
    ...result.errors.map((e) => `rule error: ${formatRuleEvaluationError(e)}`),
  ];
  if (result.errorCount > result.errors.length) {
    lines.push(`... and ${result.errorCount - result.errors.length} more rule error(s)`);
  }
  return `${lines.join('\n')}\n`;
}
