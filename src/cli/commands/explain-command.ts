import type { Event } from '../../ledger/wire/wire-types.js';
import { formatRuleEvaluationError, type Intent } from '../../rules/evaluation-result.js';
import { formatExplanation } from '../../rules/format-explanation.js';
import {
  describeSelector,
  explainUpdate,
  type UpdateExplanation,
  type UpdateSelector,
} from '../../runtime/explain-update.js';
import { configOption } from '../cli-options.js';
import { defineCommand } from '../define-command.js';
import type { CliIo } from '../cli-io.js';
import { openReplayContext, type ReplayContext } from '../compose/open-replay-context.js';
import { UsageError } from '../usage-error.js';
import { indentJson, wouldSubmit } from '../present/would-submit.js';

export const explainCommand = defineCommand({
  name: 'explain',
  summary: 'why each rule did (not) fire on one update, and what it would submit',
  usage: `explain --config FILE (--update-id ID | --offset N)`,
  description: `Fetches one update from the participant, with the bot's own subscription filter, and evaluates
it through the rules exactly as the bot does (CEL \`now\` is the update's record time). Prints,
for every event and every rule, why the rule fired or not, condition by condition, and the
commands it would submit. Submits nothing and writes nothing.`,
  options: {
    ...configOption(),
    'update-id': { type: 'string', value: 'ID', help: 'the update (transaction) to explain' },
    offset: {
      type: 'string',
      value: 'N',
      help: `or the update at this ledger offset (the \`offset\` of a log line)`,
    },
  },
  footer: `Exit status: 0 when explained, 1 when the update cannot be read, 2 for usage and config errors.`,
  run: async ({ values }, io) => {
    const which = selector(values['update-id'], values.offset);
    const ctx = await openReplayContext(values.config, 'explain');
    try {
      const explained = await explainUpdate(
        {
          ledger: ctx.ledger.client,
          index: ctx.index,
          plan: ctx.plan,
          updateFormat: ctx.updateFormat,
          parties: ctx.config.parties,
          packageNameOf: ctx.packageNameOf,
        },
        which,
      );
      return printExplanation(ctx, which, explained, io) ? 0 : 1;
    } finally {
      await ctx.close();
    }
  },
});

function selector(updateId: string | undefined, offset: string | undefined): UpdateSelector {
  if (updateId !== undefined && offset !== undefined) {
    throw new UsageError('pass --update-id ID or --offset N, not both');
  }
  if (offset !== undefined) {
    const n = Number(offset);
    if (offset.trim() === '' || !Number.isSafeInteger(n) || n < 1) {
      throw new UsageError(`--offset must be a positive whole number, not "${offset}"`);
    }
    return { offset: n };
  }
  if (updateId === undefined || updateId.trim() === '') {
    throw new UsageError(
      '--update-id ID or --offset N is required (the update id or offset from a log line or the ledger)',
    );
  }
  return { updateId };
}

/** Prints the explanation; false (after saying why on stderr) when there is none. */
function printExplanation(
  ctx: ReplayContext,
  which: UpdateSelector,
  explained: UpdateExplanation,
  io: CliIo,
): boolean {
  const what = describeSelector(which);
  switch (explained.kind) {
    case 'filtered':
      io.err(
        `ledgerbot: ${what} exists, but none of its events passes the bot's subscription filter: no enabled rule watches its templates as a party that sees them, so the bot never evaluates it\n`,
      );
      return false;
    case 'not-found':
      io.err(
        `ledgerbot: ${what} was not found, or none of the rules' parties (${ctx.plan.readParties.join(', ')}) can see it; check the ${'updateId' in which ? 'id' : 'offset'}, and that ledger.url is the participant the bot runs against\n`,
      );
      return false;
    case 'not-a-transaction':
      io.out(
        `${what} is not a transaction (${explained.updateKind}); rules react to transactions only\n`,
      );
      return false;
    case 'explained':
      break;
  }
  const tx = explained.transaction;
  io.out(
    `update ${tx.updateId} at offset ${tx.offset}, record time ${tx.recordTime}: ${tx.events.length} event(s) the bot sees\n`,
  );
  const fired = new Set<string>();
  const intents: Intent[] = [];
  let errors = 0;
  for (const { event, result } of explained.events) {
    io.out(`\n${describeEvent(event)}\n`);
    errors += result.errors.length;
    for (const explanation of result.explanations) {
      io.out(
        `${formatExplanation(explanation)
          .map((l) => `  ${l}`)
          .join('\n')}\n`,
      );
      if (!explanation.fired) continue;
      fired.add(explanation.ruleId);
      for (const intent of result.intents.filter((i) => i.ruleId === explanation.ruleId)) {
        intents.push(intent);
        io.out(
          `    would submit ${intent.commandId} (then[${intent.actionIndex}]) as ${intent.actAs.join(', ')}:\n`,
        );
        io.out(`${indentJson(wouldSubmit(intent, ctx.config), 6)}\n`);
      }
    }
    for (const e of result.errors) io.out(`  rule error: ${formatRuleEvaluationError(e)}\n`);
  }
  io.out(
    `\n${fired.size} rule(s) fired, ${intents.length} command(s) would be submitted, ${errors} rule error(s); nothing was submitted\n`,
  );
  return true;
}

function describeEvent(event: Event): string {
  if ('CreatedEvent' in event) {
    const e = event.CreatedEvent;
    return `event ${e.nodeId}: created ${e.templateId} (package ${e.packageName}) contract ${e.contractId}, witnesses ${e.witnessParties.join(', ')}`;
  }
  if ('ExercisedEvent' in event) {
    const e = event.ExercisedEvent;
    return `event ${e.nodeId}: exercised ${e.choice} (${e.consuming ? 'consuming' : 'non-consuming'}) on ${e.templateId} (package ${e.packageName}) contract ${e.contractId}, witnesses ${e.witnessParties.join(', ')}`;
  }
  if ('ArchivedEvent' in event) {
    const e = event.ArchivedEvent;
    return `event ${e.nodeId}: archived ${e.templateId} (package ${e.packageName}) contract ${e.contractId}, witnesses ${e.witnessParties.join(', ')}`;
  }
  return 'event of an unknown kind';
}
