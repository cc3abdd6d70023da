import { DEFAULTS } from '../core/defaults.js';
import { closestMatch } from '../core/source/closest-match.js';
import type { CatalogueEntry } from '../daml-lf/package-catalogue.js';
import { checkChoice, resolveRef } from './catalogue-refs.js';
import {
  SCHEDULE_RULE_VARIABLES,
  type BatchSpec,
  type CatchUpPolicy,
  type CompiledExpression,
  type ForEach,
  type ScheduleTrigger,
  type Trigger,
} from './compiled-rule.js';
import { isRecord } from './is-record.js';
import { parseCron } from './parse-cron.js';
import type { RuleScope } from './rule-scope.js';
import { TRIGGER_KINDS } from './rule-language.js';
import { hasTemplate } from './split-template.js';

/** A rule's trigger: an event (`on:`) or a cron schedule (with an optional `forEach:`). */
export function compileTrigger(scope: RuleScope): Trigger | null {
  const raw = scope.raw;
  if (isRecord(raw.on)) {
    if (raw.forEach !== undefined) {
      scope.error(
        scope.at.pos(scope.p('forEach'), { key: true }),
        'TRIGGER',
        '`forEach` belongs to schedule rules',
        'an event rule reads the event itself (`event` in expressions); remove `forEach` or use `schedule:`',
      );
    }
    return eventTrigger(scope, raw.on);
  }
  if (isRecord(raw.schedule)) return scheduleTrigger(scope, raw.schedule);
  return null;
}

function eventTrigger(scope: RuleScope, on: Record<string, unknown>): Trigger | null {
  const present = TRIGGER_KINDS.filter((k) => on[k] !== undefined);
  const kind = present[0];
  const party = scope.party(on.party, scope.p('on', 'party'));
  if (present.length !== 1 || kind === undefined || party === null) return null;
  const pos = scope.at.pos(scope.p('on', kind), { key: true });
  if (kind === 'exercised') {
    const ex = on.exercised;
    if (!isRecord(ex) || typeof ex.choice !== 'string') return null;
    if (ex.interface !== undefined && ex.template !== undefined) return null; // the schema's
    const written = ex.interface !== undefined ? 'interface' : 'template';
    const resolved = resolveRef(
      scope,
      ex[written],
      scope.p('on', 'exercised', written),
      written,
      'exercised',
    );
    if (resolved === null) return null;
    checkChoice(scope, resolved, ex.choice, scope.p('on', 'exercised', 'choice'));
    return withEntries(scope, resolved.entries, {
      kind,
      template: resolved.ref,
      refKind: resolved.refKind,
      choice: ex.choice,
      consuming: typeof ex.consuming === 'boolean' ? ex.consuming : null,
      party,
      pos,
    });
  }
  const resolved = resolveRef(scope, on[kind], scope.p('on', kind), 'either', kind);
  if (resolved === null) return null;
  return withEntries(scope, resolved.entries, {
    kind,
    template: resolved.ref,
    refKind: resolved.refKind,
    party,
    pos,
  });
}

/** Tells the scope what the trigger's values hold (for the field checks), and returns it. */
function withEntries(
  scope: RuleScope,
  entries: readonly CatalogueEntry[],
  trigger: Trigger,
): Trigger {
  scope.setTrigger(trigger, entries);
  return trigger;
}

function scheduleTrigger(scope: RuleScope, schedule: Record<string, unknown>): Trigger | null {
  if (typeof schedule.cron !== 'string') return null;
  const cronPath = scope.p('schedule', 'cron');
  const cronSpec = parseCron(schedule.cron);
  if ('problem' in cronSpec) {
    scope.error(
      scope.at.valuePos(cronPath, cronSpec.offset),
      'BAD_CRON',
      `bad cron expression "${schedule.cron}": ${cronSpec.problem}`,
      'e.g. "0 9 * * MON-FRI" is 9:00 on weekdays, "*/15 * * * *" every 15 minutes',
    );
  }
  const timezone = compileTimezone(scope, schedule.timezone);
  let forEach: ForEach | null = null;
  let entries: readonly CatalogueEntry[] = [];
  const rawForEach = scope.raw.forEach;
  if (isRecord(rawForEach)) {
    const resolved = resolveRef(
      scope,
      rawForEach.activeContracts,
      scope.p('forEach', 'activeContracts'),
      'either',
      'forEach',
    );
    const party = scope.party(rawForEach.party, scope.p('forEach', 'party'));
    if (resolved === null || party === null) return null;
    entries = resolved.entries;
    forEach = {
      template: resolved.ref,
      refKind: resolved.refKind,
      party,
      batch: null,
      pos: scope.at.pos(scope.p('forEach'), { key: true }),
    };
  }
  const jitterMs = scope.duration(schedule.jitter, scope.p('schedule', 'jitter'), 0);
  if ('problem' in cronSpec || timezone === null || jitterMs === null) return null;
  const trigger: ScheduleTrigger = {
    kind: 'schedule',
    cron: schedule.cron,
    cronSpec,
    timezone,
    forEach,
    catchUp: (schedule.catchUp as CatchUpPolicy | undefined) ?? 'last',
    maxCatchUp:
      typeof schedule.maxCatchUp === 'number' ? schedule.maxCatchUp : DEFAULTS.rule.maxCatchUp,
    jitterMs,
    pos: scope.at.pos(scope.p('schedule'), { key: true }),
  };
  withEntries(scope, entries, trigger);
  if (forEach === null || !isRecord(rawForEach) || !isRecord(rawForEach.batch)) return trigger;
  // After withEntries: `groupBy` reads `contract`, checked against the trigger's types.
  const batch = compileBatch(scope, rawForEach.batch);
  return batch === null ? null : { ...trigger, forEach: { ...forEach, batch } };
}

/** `forEach.batch`: its numbers, and `groupBy` compiled over `contract`. */
function compileBatch(scope: RuleScope, raw: Record<string, unknown>): BatchSpec | null {
  const size = typeof raw.size === 'number' ? raw.size : DEFAULTS.rule.batch.size;
  const min = typeof raw.min === 'number' ? raw.min : DEFAULTS.rule.batch.min;
  if (min > size) {
    scope.error(
      scope.at.pos(scope.p('forEach', 'batch', 'min')),
      'BAD_VALUE',
      `batch.min (${min}) is larger than batch.size (${size}): no batch could fire`,
      `lower min, or raise size to at least ${min}`,
    );
    return null;
  }
  let groupBy: CompiledExpression | null = null;
  if (typeof raw.groupBy === 'string') {
    const path = scope.p('forEach', 'batch', 'groupBy');
    if (hasTemplate(raw.groupBy)) return null; // reported as TEMPLATE_NOT_ALLOWED
    groupBy = scope.expression(raw.groupBy, path, 0, SCHEDULE_RULE_VARIABLES, 'schedule');
    if (groupBy === null) return null;
  }
  return { size, min, groupBy, pos: scope.at.pos(scope.p('forEach', 'batch'), { key: true }) };
}

function compileTimezone(scope: RuleScope, raw: unknown): string | null {
  const zone = typeof raw === 'string' ? raw : 'UTC';
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    const guess = closestMatch(zone, Intl.supportedValuesOf('timeZone'));
    scope.error(
      scope.at.pos(scope.p('schedule', 'timezone')),
      'BAD_TIMEZONE',
      `unknown time zone "${zone}"`,
      guess !== undefined
        ? `did you mean "${guess}"?`
        : 'use an IANA time zone name such as Europe/Zurich, America/New_York or UTC',
    );
    return null;
  }
}
