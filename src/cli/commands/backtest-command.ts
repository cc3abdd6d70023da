import { classify } from '../../ledger/classify.js';
import { parseCompletionStatus } from '../../ledger/completion-status.js';
import { MAX_LIST_LIMIT } from '../../ledger/ledger-client.js';
import type { JsTransaction, Update } from '../../ledger/wire/wire-types.js';
import { evaluateTransaction } from '../../rules/evaluate.js';
import { formatRuleEvaluationError } from '../../rules/evaluation-result.js';
import { configOption } from '../cli-options.js';
import { defineCommand } from '../define-command.js';
import { openReplayContext, type ReplayContext } from '../compose/open-replay-context.js';
import { UsageError } from '../usage-error.js';

/** Whether a would-be command is on the ledger, as far as the completions of the bot's user say. */
export type LedgerStatus = 'on-ledger' | 'rejected' | 'absent';

export type BacktestCommand = {
  readonly offset: number;
  readonly updateId: string;
  readonly nodeId: number;
  readonly ruleId: string;
  readonly actionIndex: number;
  readonly commandId: string;
  readonly actAs: readonly string[];
  readonly status: LedgerStatus;
  /** The completion that says so (on-ledger, rejected). */
  readonly completionOffset?: number;
  /** The rejection's error code. */
  readonly error?: string;
};

export type BacktestRuleStats = {
  /** Events whose trigger matched (template, kind, party). */
  matched: number;
  fired: number;
  /** Matched, but a `when` condition was false. */
  conditionsFalse: number;
  errors: number;
  commands: number;
};

export type BacktestReport = {
  readonly from: number;
  readonly to: number;
  readonly transactions: number;
  readonly events: number;
  readonly commands: readonly BacktestCommand[];
  readonly rules: Readonly<Record<string, BacktestRuleStats>>;
  readonly ruleErrors: readonly string[];
  readonly summary: {
    readonly commands: number;
    readonly onLedger: number;
    readonly rejected: number;
    readonly absent: number;
  };
};

/** A replay never reads more pages than this (200 updates each): a guard, not a real limit. */
const MAX_PAGES = 100_000;

export const backtestCommand = defineCommand({
  name: 'backtest',
  summary: 'replay an offset range through the rules: what would fire, and is it on the ledger',
  usage: `backtest --config FILE --from OFFSET --to OFFSET [--json]`,
  description: `Replays the ledger's updates from offset --from to offset --to (both included), with the bot's
own subscription filter, through the rules, exactly as the bot evaluates them. Reports every
command the rules would have submitted and whether it is already on the ledger: its commandId
completed for the bot's user (from the completions of the range and later, and from the bot's
own transactions in the range). Submits nothing
and writes nothing.`,
  options: {
    ...configOption(),
    from: { type: 'string', value: 'OFFSET', help: 'the first offset replayed' },
    to: {
      type: 'string',
      value: 'OFFSET',
      help: 'the last offset replayed (at most the ledger end)',
    },
    json: { type: 'boolean', default: false, help: 'print the report as one JSON document' },
  },
  footer: `Exit status: 0 when replayed, 1 when the ledger cannot be read (pruned range, say), 2 for
usage and config errors.`,
  run: async ({ values }, io) => {
    const from = offsetOption('--from', values.from);
    const to = offsetOption('--to', values.to);
    if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
    const ctx = await openReplayContext(values.config, 'backtest');
    try {
      const end = await ctx.ledger.client.ledgerEnd();
      if (to > end) {
        throw new UsageError(
          `--to ${to} is past the ledger end (${end}); pass --to ${end} or less`,
        );
      }
      const report = await backtest(ctx, from, to);
      io.out(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      return 0;
    } finally {
      await ctx.close();
    }
  },
});

function offsetOption(name: string, text: string | undefined): number {
  if (text === undefined) throw new UsageError(`${name} OFFSET is required`);
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n)) {
    throw new UsageError(`${name} must be a ledger offset (a non-negative integer), not "${text}"`);
  }
  return n;
}

/** Replays (from-1, to] page by page and checks every would-be command against the completions. */
export async function backtest(
  ctx: ReplayContext,
  from: number,
  to: number,
): Promise<BacktestReport> {
  const rules: Record<string, BacktestRuleStats> = Object.fromEntries(
    ctx.rules.rules.map((r) => [
      r.id,
      { matched: 0, fired: 0, conditionsFalse: 0, errors: 0, commands: 0 },
    ]),
  );
  const found: Omit<BacktestCommand, 'status'>[] = [];
  const ruleErrors: string[] = [];
  const landedInRange = new Map<string, number>();
  let transactions = 0;
  let events = 0;
  const beginExclusive = Math.max(0, from - 1);
  let cursor = beginExclusive;
  for (let page = 0; page < MAX_PAGES && cursor < to; page++) {
    const elements = await ctx.ledger.client.listUpdates(
      { beginExclusive: cursor, endInclusive: to, updateFormat: ctx.updateFormat },
      { limit: MAX_LIST_LIMIT },
    );
    let last = cursor;
    for (const element of elements) {
      const update = element.update;
      if (update === undefined) continue;
      last = Math.max(last, offsetOf(update));
      if (!('Transaction' in update)) continue;
      const tx = update.Transaction.value;
      // The participant fills commandId in for the submitting user's own transactions only.
      if (tx.commandId !== undefined && tx.commandId !== '') {
        landedInRange.set(tx.commandId, tx.offset);
      }
      transactions += 1;
      events += tx.events.length;
      evaluateOne(ctx, tx, rules, found, ruleErrors);
    }
    // A short page is the end of the range; no progress would loop forever.
    if (elements.length < MAX_LIST_LIMIT || last === cursor) break;
    cursor = last;
  }
  const outcomes = await completionsOf(ctx, beginExclusive, new Set(found.map((c) => c.commandId)));
  const commands = found.map((c): BacktestCommand => {
    const landed = landedInRange.get(c.commandId);
    const o: Outcome | undefined =
      landed === undefined ? outcomes.get(c.commandId) : { offset: landed };
    if (o === undefined) return { ...c, status: 'absent' };
    return o.error === undefined
      ? { ...c, status: 'on-ledger', completionOffset: o.offset }
      : { ...c, status: 'rejected', completionOffset: o.offset, error: o.error };
  });
  const count = (s: LedgerStatus): number => commands.filter((c) => c.status === s).length;
  return {
    from,
    to,
    transactions,
    events,
    commands,
    rules,
    ruleErrors,
    summary: {
      commands: commands.length,
      onLedger: count('on-ledger'),
      rejected: count('rejected'),
      absent: count('absent'),
    },
  };
}

function evaluateOne(
  ctx: ReplayContext,
  tx: JsTransaction,
  rules: Record<string, BacktestRuleStats>,
  found: Omit<BacktestCommand, 'status'>[],
  ruleErrors: string[],
): void {
  const recordMs = Date.parse(tx.recordTime);
  // As the bot: CEL `now` is the record time, so the replay decides as the bot did.
  const result = evaluateTransaction(
    ctx.index,
    tx,
    { parties: ctx.config.parties, now: new Date(Number.isFinite(recordMs) ? recordMs : 0) },
    { packageNameOf: ctx.packageNameOf },
  );
  for (const e of result.explanations) {
    const stats = rules[e.ruleId];
    if (stats === undefined || !e.triggerMatched) continue;
    stats.matched += 1;
    if (e.fired) stats.fired += 1;
    else if (e.error !== null) stats.errors += 1;
    else stats.conditionsFalse += 1;
  }
  for (const e of result.errors) {
    ruleErrors.push(`offset ${tx.offset} update ${tx.updateId}: ${formatRuleEvaluationError(e)}`);
  }
  for (const intent of result.intents) {
    const stats = rules[intent.ruleId];
    if (stats !== undefined) stats.commands += 1;
    const key = intent.triggerKey;
    found.push({
      offset: intent.offset,
      updateId: tx.updateId,
      nodeId: key.kind === 'event' ? key.nodeId : -1,
      ruleId: intent.ruleId,
      actionIndex: intent.actionIndex,
      commandId: intent.commandId,
      actAs: intent.actAs,
    });
  }
}

function offsetOf(update: Update): number {
  if ('Transaction' in update) return update.Transaction.value.offset;
  if ('OffsetCheckpoint' in update) return update.OffsetCheckpoint.value.offset;
  if ('Reassignment' in update) return update.Reassignment.value.offset;
  if ('TopologyTransaction' in update) return update.TopologyTransaction.value.offset;
  return 0;
}

type Outcome = { readonly offset: number; readonly error?: string };

/**
 * The completions of the bot's user for its actAs parties after `beginExclusive`, up to now, for
 * the given commandIds. A command triggered by an event in the range is submitted after that
 * event, so its completions all come after the range's start. Success, or DUPLICATE_COMMAND (an
 * earlier submission landed), wins over any rejection of another attempt.
 */
async function completionsOf(
  ctx: ReplayContext,
  beginExclusive: number,
  wanted: ReadonlySet<string>,
): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>();
  if (wanted.size === 0 || ctx.plan.actAsParties.length === 0) return out;
  let cursor = beginExclusive;
  for (let page = 0; page < MAX_PAGES; page++) {
    const elements = await ctx.ledger.client.listCompletions(
      {
        userId: ctx.config.ledger.userId,
        parties: [...ctx.plan.actAsParties],
        beginExclusive: cursor,
      },
      { limit: MAX_LIST_LIMIT },
    );
    let last = cursor;
    for (const element of elements) {
      const r = element.completionResponse;
      if (r === undefined) continue;
      if ('OffsetCheckpoint' in r) {
        last = Math.max(last, r.OffsetCheckpoint.value.offset);
        continue;
      }
      if (!('Completion' in r)) continue;
      const c = r.Completion.value;
      last = Math.max(last, c.offset);
      if (!wanted.has(c.commandId)) continue;
      const error = parseCompletionStatus(c.status);
      const landed = error === undefined || classify(error) === 'duplicate';
      const previous = out.get(c.commandId);
      if (landed) {
        if (previous === undefined || previous.error !== undefined) {
          out.set(c.commandId, { offset: c.offset });
        }
      } else if (previous === undefined) {
        out.set(c.commandId, { offset: c.offset, error: error.code });
      }
    }
    if (elements.length < MAX_LIST_LIMIT || last === cursor) break;
    cursor = last;
  }
  return out;
}

const STATUS_TEXT: Record<LedgerStatus, string> = {
  'on-ledger': 'already on the ledger',
  rejected: 'rejected by the ledger',
  absent: 'NOT on the ledger',
};

export function formatReport(report: BacktestReport): string {
  const lines = [`backtest of offsets ${report.from} to ${report.to} (nothing is submitted)`];
  for (const c of report.commands) {
    const detail =
      c.status === 'on-ledger'
        ? ` (completion at offset ${c.completionOffset})`
        : c.status === 'rejected'
          ? `: ${c.error} (completion at offset ${c.completionOffset})`
          : '';
    lines.push(
      `  offset ${c.offset} update ${c.updateId} node ${c.nodeId}: ${c.ruleId} then[${c.actionIndex}] → ${c.commandId}: ${STATUS_TEXT[c.status]}${detail}`,
    );
  }
  lines.push('rules:');
  for (const [id, s] of Object.entries(report.rules)) {
    lines.push(
      `  ${id}: ${s.matched} matched, ${s.fired} fired, ${s.conditionsFalse} conditions false, ${s.errors} errors, ${s.commands} commands`,
    );
  }
  for (const e of report.ruleErrors) lines.push(`rule error: ${e}`);
  const s = report.summary;
  lines.push(
    `summary: ${report.transactions} transaction(s), ${report.events} event(s); ${s.commands} command(s) would have been submitted: ${s.onLedger} already on the ledger, ${s.rejected} rejected, ${s.absent} not on the ledger; ${report.ruleErrors.length} rule error(s)`,
  );
  return `${lines.join('\n')}\n`;
}
