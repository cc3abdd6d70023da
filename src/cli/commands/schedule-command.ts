import type { BotConfig } from '../../runtime/config/bot-config.js';
import type { CompiledRule } from '../../rules/compiled-rule.js';
import { formatSlot } from '../../schedule/format-slot.js';
import { nextSlots } from '../../schedule/slots-between.js';
import type { SlotRecord } from '../../store/store.js';
import { defineCommand } from '../define-command.js';
import { loadConfigRules } from '../compose/load-config-rules.js';
import { openConfigQueries } from '../compose/open-config-queries.js';
import { parseTimeOption } from '../parse-time-option.js';
import { readConfigFor } from '../compose/read-config.js';
import { UsageError } from '../usage-error.js';

export const scheduleCommand = defineCommand({
  name: 'schedule',
  summary: 'list schedule rules with their next slots and last completed slot',
  usage: `schedule --config FILE [--count N] [--from TIME] [--format text|json]`,
  description: `Lists each schedule rule with its next slots in its time zone and its last completed slot (read
from the state store, without writing to it, if there is one).`,
  options: {
    config: { type: 'string', value: 'FILE', help: 'the bot config (required)' },
    count: {
      type: 'string',
      default: '5',
      value: 'N',
      help: 'how many next slots to show (default 5)',
    },
    from: {
      type: 'string',
      value: 'TIME',
      help: 'list the slots after this ISO 8601 time instead of now',
    },
    format: { type: 'string', default: 'text', value: 'F', help: 'text (default) or json' },
  },
  run: async ({ values }, io) => {
    if (values.config === undefined) throw new UsageError('--config FILE is required');
    const count = Number(values.count);
    if (!Number.isInteger(count) || count < 1 || count > 1000) {
      throw new UsageError(`--count must be a whole number from 1 to 1000, not "${values.count}"`);
    }
    const format = values.format;
    if (format !== 'text' && format !== 'json') {
      throw new UsageError(`--format must be text or json, not "${format}"`);
    }
    const from = values.from === undefined ? Date.now() : parseTimeOption('--from', values.from);
    const config = await readConfigFor(['http', 'state'], values.config);
    // The store only: the participant is not asked (its packages are not needed to list slots).
    const ruleSet = await loadConfigRules(config);
    const scheduled = ruleSet.rules.filter((r) => r.trigger.kind === 'schedule');
    const records = await readSlotRecords(config);
    const listed = scheduled.map((rule) => describe(rule, from, count, records));
    if (format === 'json') {
      io.out(`${JSON.stringify({ rules: listed }, null, 2)}\n`);
      return 0;
    }
    if (listed.length === 0) {
      io.out(`no schedule rules in ${config.rules.join(', ')}\n`);
      return 0;
    }
    io.out(listed.map(formatText).join('\n'));
    return 0;
  },
});

type Listed = {
  readonly ruleId: string;
  readonly enabled: boolean;
  readonly cron: string;
  readonly timezone: string;
  readonly catchUp: string;
  readonly maxCatchUp: number;
  readonly jitterMs: number;
  readonly forEach: {
    readonly template: string;
    readonly party: string;
    /** `forEach.batch`: `groupBy` as written, or null. */
    readonly batch?: {
      readonly size: number;
      readonly min: number;
      readonly groupBy: string | null;
    };
  } | null;
  /** Null: no state store yet. */
  readonly lastCompleted: SlotView | null | 'never';
  readonly inProgress: SlotView | null;
  readonly next: readonly SlotView[];
};

type SlotView = { readonly local: string; readonly utc: string };

function describe(
  rule: CompiledRule,
  from: number,
  count: number,
  records: ReadonlyMap<string, SlotRecord> | null,
): Listed {
  const trigger = rule.trigger;
  if (trigger.kind !== 'schedule') throw new TypeError('not a schedule rule');
  const view = (slot: number): SlotView => ({
    local: formatSlot(slot, trigger.timezone),
    utc: new Date(slot).toISOString(),
  });
  const record = records?.get(rule.id);
  return {
    ruleId: rule.id,
    enabled: rule.enabled,
    cron: trigger.cron,
    timezone: trigger.timezone,
    catchUp: trigger.catchUp,
    maxCatchUp: trigger.maxCatchUp,
    jitterMs: trigger.jitterMs,
    forEach:
      trigger.forEach === null
        ? null
        : {
            template: trigger.forEach.template.text,
            party: trigger.forEach.party,
            ...(trigger.forEach.batch === null
              ? {}
              : {
                  batch: {
                    size: trigger.forEach.batch.size,
                    min: trigger.forEach.batch.min,
                    groupBy: trigger.forEach.batch.groupBy?.source ?? null,
                  },
                }),
          },
    lastCompleted:
      records === null
        ? null
        : record?.lastCompletedSlot === undefined
          ? 'never'
          : view(record.lastCompletedSlot),
    inProgress: record?.inProgressSlot === undefined ? null : view(record.inProgressSlot),
    next: nextSlots(trigger.cronSpec, trigger.timezone, from, count).map(view),
  };
}

function formatText(r: Listed): string {
  const lines = [
    `${r.ruleId}${r.enabled ? '' : ' (disabled)'}`,
    `  cron:           ${r.cron}  (${r.timezone})`,
    `  catch-up:       ${r.catchUp}${r.catchUp === 'all' ? ` (at most ${r.maxCatchUp})` : ''}${r.jitterMs > 0 ? `, jitter up to ${r.jitterMs} ms` : ''}`,
    `  for each:       ${r.forEach === null ? '(once per slot)' : `${r.forEach.template} seen by ${r.forEach.party}${batchText(r.forEach.batch)}`}`,
    `  last completed: ${
      r.lastCompleted === null
        ? 'unknown (no state store yet)'
        : r.lastCompleted === 'never'
          ? 'never'
          : `${r.lastCompleted.local}  ${r.lastCompleted.utc}`
    }`,
  ];
  if (r.inProgress !== null) {
    lines.push(
      `  in progress:    ${r.inProgress.local}  ${r.inProgress.utc} (interrupted; runs again at the next start)`,
    );
  }
  lines.push(r.next.length === 0 ? '  next:           none (the spec names no date)' : '  next:');
  for (const slot of r.next) lines.push(`    ${slot.local}  ${slot.utc}`);
  return `${lines.join('\n')}\n`;
}

/** The slot records of the config's journal (read-only), or null when it has none yet. */
async function readSlotRecords(config: BotConfig): Promise<Map<string, SlotRecord> | null> {
  const read = await openConfigQueries(config, { mustExist: false });
  if (read === undefined) return null;
  try {
    return new Map((await read.queries.listSlotRecords()).map((r) => [r.ruleId, r]));
  } finally {
    await read.close();
  }
}

/** ", in batches of 2 to 100 by contract.view.instrumentId", or nothing without `batch`. */
function batchText(batch: NonNullable<Listed['forEach']>['batch']): string {
  if (batch === undefined) return '';
  const range = batch.min === 1 ? `up to ${batch.size}` : `${batch.min} to ${batch.size}`;
  return `, in batches of ${range}${batch.groupBy === null ? '' : ` by ${batch.groupBy}`}`;
}
