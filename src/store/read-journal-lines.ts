import type { JournalContents, JournalIntentRow, RuleCheckpoint } from './journal-transfer.js';
import {
  depthOver,
  JOURNAL_FORMAT,
  JOURNAL_FORMAT_VERSION,
  JOURNAL_LINE_LIMITS,
  JournalFormatError,
  type JournalHeader,
  type JournalLineLimits,
} from './journal-lines.js';
import {
  INTENT_STATES,
  type AttemptOutcome,
  type AttemptRecord,
  type IntentRecord,
  type IntentState,
  type SlotRecord,
  type TriggerKey,
} from './store.js';

/**
 * Reads an export back, checking every line: throws JournalFormatError naming `source` and the
 * line (1-based) of the first thing wrong, before anything is returned.
 */
export function parseJournalLines(
  bytes: Uint8Array,
  source: string,
  limits: JournalLineLimits = JOURNAL_LINE_LIMITS,
): JournalContents & { readonly header: JournalHeader } {
  const fail = (line: number | undefined, why: string): never => {
    throw new JournalFormatError(
      'JOURNAL_BAD_FORMAT',
      `${source}${line === undefined ? '' : `:${line}`}: ${why}`,
    );
  };
  if (bytes.length > limits.maxFileBytes) {
    fail(undefined, `the file has ${bytes.length} bytes, more than ${limits.maxFileBytes}`);
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let header: JournalHeader | undefined;
  const intents: JournalIntentRow[] = [];
  const slots: SlotRecord[] = [];
  const seen = new Map<string, number>();
  let line = 0;
  let start = 0;
  while (start < bytes.length) {
    line += 1;
    const newline = bytes.indexOf(0x0a, start);
    if (newline < 0) {
      fail(line, 'the last line has no newline: the file is truncated');
    }
    if (newline - start > limits.maxLineBytes) {
      fail(line, `the line is longer than ${limits.maxLineBytes} bytes`);
    }
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(bytes.subarray(start, newline)));
    } catch (err) {
      fail(line, `not a JSON line (${(err as Error).message})`);
    }
    start = newline + 1;
    const at = (why: string): never => fail(line, why);
    if (depthOver(value, limits.maxDepth)) {
      at(`the line nests deeper than ${limits.maxDepth} levels`);
    }
    if (header === undefined) {
      header = headerOf(value, at);
      continue;
    }
    const kind = isObject(value) ? value.kind : undefined;
    if (kind === 'intent') {
      if (slots.length > 0) at('an intent after the slot records');
      const row = intentRowOf(value as Record<string, unknown>, at);
      const first = seen.get(row.intent.commandId);
      if (first !== undefined) {
        at(`intent ${row.intent.commandId} again (first on line ${first})`);
      }
      seen.set(row.intent.commandId, line);
      intents.push(row);
    } else if (kind === 'slot') {
      slots.push(slotLineOf(value as Record<string, unknown>, at));
    } else {
      at('not an intent or slot line (its "kind" must be "intent" or "slot")');
    }
  }
  if (header === undefined) return fail(undefined, `the file is empty, not a ${JOURNAL_FORMAT}`);
  if (intents.length !== header.intents || slots.length !== header.slots) {
    fail(
      line,
      `the header promises ${header.intents} intents and ${header.slots} slot records, the file has ${intents.length} and ${slots.length}: it is truncated or edited`,
    );
  }
  return {
    header,
    ...(header.checkpoint === null ? {} : { checkpoint: header.checkpoint }),
    ...(header.processedOffset === null ? {} : { processedOffset: header.processedOffset }),
    ...(header.ruleCheckpoints === undefined ? {} : { ruleCheckpoints: header.ruleCheckpoints }),
    intents,
    slots,
  };
}

type Fail = (why: string) => never;

function headerOf(value: unknown, fail: Fail): JournalHeader {
  if (!isObject(value) || value.format !== JOURNAL_FORMAT) {
    fail(`not a ${JOURNAL_FORMAT} export: its first line must be the header`);
  }
  const h = value;
  if (h.version !== JOURNAL_FORMAT_VERSION) {
    fail(
      `version ${JSON.stringify(h.version)} of ${JOURNAL_FORMAT}, but this ledgerbot reads version ${JOURNAL_FORMAT_VERSION}`,
    );
  }
  onlyKeys(
    h,
    [
      'format',
      'version',
      'exportedAt',
      'checkpoint',
      'processedOffset',
      'ruleCheckpoints',
      'intents',
      'slots',
    ],
    'the header',
    fail,
  );
  if (typeof h.exportedAt !== 'string') fail('the header has no exportedAt');
  return {
    format: JOURNAL_FORMAT,
    version: JOURNAL_FORMAT_VERSION,
    exportedAt: h.exportedAt,
    checkpoint: nullableCount(h.checkpoint, 'the header checkpoint', fail),
    processedOffset: nullableCount(h.processedOffset, 'the header processedOffset', fail),
    ...(h.ruleCheckpoints === undefined
      ? {}
      : { ruleCheckpoints: ruleCheckpointsOf(h.ruleCheckpoints, fail) }),
    intents: count(h.intents, 'the header intents', fail),
    slots: count(h.slots, 'the header slots', fail),
  };
}

function ruleCheckpointsOf(value: unknown, fail: Fail): RuleCheckpoint[] {
  if (!Array.isArray(value)) fail('the header ruleCheckpoints is not a list');
  const seen = new Set<string>();
  return (value as unknown[]).map((r) => {
    if (!isObject(r) || typeof r.ruleId !== 'string' || r.ruleId === '' || seen.has(r.ruleId)) {
      fail('a header rule checkpoint has no ruleId, or one named twice');
    }
    onlyKeys(r, ['ruleId', 'checkpoint', 'processedOffset'], 'a header rule checkpoint', fail);
    seen.add(r.ruleId);
    const processed = r.processedOffset;
    return {
      ruleId: r.ruleId,
      checkpoint: count(r.checkpoint, 'a header rule checkpoint', fail),
      ...(processed === undefined
        ? {}
        : { processedOffset: count(processed, 'a header rule processedOffset', fail) }),
    };
  });
}

const OUTCOMES: ReadonlySet<string> = new Set<AttemptOutcome>([
  'pending',
  'succeeded',
  'duplicate',
  'rejected',
  'retry',
  'in-doubt',
  'dead-lettered',
]);

function intentRowOf(line: Record<string, unknown>, fail: Fail): JournalIntentRow {
  onlyKeys(line, ['kind', 'intent', 'event', 'attemptLog', 'deadLetter'], 'an intent line', fail);
  const i = line.intent;
  if (!isObject(i)) return fail('an intent line without its "intent"');
  onlyKeys(
    i,
    [
      'commandId',
      'userId',
      'actAs',
      'ruleId',
      'revision',
      'actionIndex',
      'trigger',
      'offset',
      'payload',
      'state',
      'attempts',
      'submissionId',
      'lastError',
      'nextAttemptAt',
      'deadline',
      'createdAt',
      'updatedAt',
      'completionOffset',
      'completionUpdateId',
      'inDoubt',
    ],
    'intent',
    fail,
  );
  const commandId = text(i.commandId, 'intent.commandId', fail);
  if (commandId === '') fail('intent.commandId is empty');
  const f = (field: string): string => `intent ${commandId}: ${field}`;
  if (!Array.isArray(i.actAs) || i.actAs.some((p) => typeof p !== 'string')) {
    fail(`${f('actAs')} must be an array of party ids`);
  }
  if (!INTENT_STATES.includes(i.state as IntentState)) {
    fail(`${f('state')} must be one of ${INTENT_STATES.join(', ')}`);
  }
  if (!('payload' in i)) fail(`${f('payload')} is missing`);
  if (i.inDoubt !== undefined && i.inDoubt !== true) fail(`${f('inDoubt')} must be true or absent`);
  const state = i.state as IntentState;
  const intent: IntentRecord = {
    commandId,
    userId: text(i.userId, f('userId'), fail),
    actAs: i.actAs as string[],
    ruleId: text(i.ruleId, f('ruleId'), fail),
    revision: count(i.revision, f('revision'), fail),
    actionIndex: count(i.actionIndex, f('actionIndex'), fail),
    trigger: triggerOf(i.trigger, f('trigger'), fail),
    offset: count(i.offset, f('offset'), fail),
    payload: i.payload,
    state,
    attempts: count(i.attempts, f('attempts'), fail),
    ...optional(i.submissionId, (v) => ({ submissionId: text(v, f('submissionId'), fail) })),
    ...('lastError' in i ? { lastError: i.lastError } : {}),
    ...optional(i.nextAttemptAt, (v) => ({ nextAttemptAt: count(v, f('nextAttemptAt'), fail) })),
    ...optional(i.deadline, (v) => ({ deadline: count(v, f('deadline'), fail) })),
    createdAt: count(i.createdAt, f('createdAt'), fail),
    updatedAt: count(i.updatedAt, f('updatedAt'), fail),
    ...optional(i.completionOffset, (v) => ({
      completionOffset: count(v, f('completionOffset'), fail),
    })),
    ...optional(i.completionUpdateId, (v) => ({
      completionUpdateId: text(v, f('completionUpdateId'), fail),
    })),
    ...(i.inDoubt === true ? { inDoubt: true as const } : {}),
  };
  if (!Array.isArray(line.attemptLog)) fail(`${f('attemptLog')} must be an array`);
  const attemptLog = (line.attemptLog as unknown[]).map((a, n) =>
    attemptOf(a, f(`attemptLog[${n}]`), fail),
  );
  const dead = line.deadLetter;
  if ((dead !== undefined) !== (state === 'dead-lettered')) {
    fail(
      state === 'dead-lettered'
        ? `${f('deadLetter')} is missing for a dead-lettered intent`
        : `${f('deadLetter')} is set, but the intent is ${state}`,
    );
  }
  let deadLetter: JournalIntentRow['deadLetter'];
  if (dead !== undefined) {
    if (!isObject(dead) || !('error' in dead)) fail(`${f('deadLetter')} needs an error`);
    const d = dead;
    onlyKeys(d, ['error', 'event', 'deadLetteredAt'], f('deadLetter'), fail);
    deadLetter = {
      error: d.error,
      ...('event' in d ? { event: d.event } : {}),
      deadLetteredAt: count(d.deadLetteredAt, f('deadLetter.deadLetteredAt'), fail),
    };
  }
  return {
    intent,
    ...('event' in line ? { event: line.event } : {}),
    attemptLog,
    ...(deadLetter === undefined ? {} : { deadLetter }),
  };
}

function attemptOf(value: unknown, what: string, fail: Fail): AttemptRecord {
  if (!isObject(value)) return fail(`${what} must be an object`);
  onlyKeys(value, ['n', 'submissionId', 'at', 'outcome', 'error'], what, fail);
  if (typeof value.outcome !== 'string' || !OUTCOMES.has(value.outcome)) {
    fail(`${what}.outcome must be one of ${[...OUTCOMES].join(', ')}`);
  }
  const e = value.error;
  if (
    e !== undefined &&
    (!isObject(e) ||
      typeof e.code !== 'string' ||
      typeof e.message !== 'string' ||
      Object.keys(e).length !== 2)
  ) {
    fail(`${what}.error must be { code, message }`);
  }
  const error = e as { code: string; message: string } | undefined;
  return {
    n: count(value.n, `${what}.n`, fail),
    submissionId: text(value.submissionId, `${what}.submissionId`, fail),
    at: count(value.at, `${what}.at`, fail),
    outcome: value.outcome as AttemptOutcome,
    ...(error === undefined ? {} : { error: { code: error.code, message: error.message } }),
  };
}

function triggerOf(value: unknown, what: string, fail: Fail): TriggerKey {
  if (!isObject(value)) return fail(`${what} must be an object`);
  switch (value.kind) {
    case 'event':
      onlyKeys(value, ['kind', 'updateId', 'nodeId'], what, fail);
      return {
        kind: 'event',
        updateId: text(value.updateId, `${what}.updateId`, fail),
        nodeId: count(value.nodeId, `${what}.nodeId`, fail),
      };
    case 'contract':
      onlyKeys(value, ['kind', 'contractId', 'nodeId'], what, fail);
      return {
        kind: 'contract',
        contractId: text(value.contractId, `${what}.contractId`, fail),
        nodeId: count(value.nodeId, `${what}.nodeId`, fail),
      };
    case 'slot':
      onlyKeys(value, ['kind', 'slot', 'contractId'], what, fail);
      return {
        kind: 'slot',
        slot: count(value.slot, `${what}.slot`, fail),
        contractId:
          value.contractId === null ? null : text(value.contractId, `${what}.contractId`, fail),
      };
    default:
      return fail(`${what}.kind must be event, contract or slot`);
  }
}

function slotLineOf(line: Record<string, unknown>, fail: Fail): SlotRecord {
  onlyKeys(line, ['kind', 'slot'], 'a slot line', fail);
  const s = line.slot;
  if (!isObject(s)) return fail('a slot line without its "slot"');
  onlyKeys(
    s,
    ['ruleId', 'lastCompletedSlot', 'inProgressSlot', 'inProgressSince', 'snapshotOffset'],
    'slot',
    fail,
  );
  const ruleId = text(s.ruleId, 'slot.ruleId', fail);
  const n = (key: string): Record<string, number> =>
    s[key] === undefined ? {} : { [key]: count(s[key], `slot ${ruleId}: ${key}`, fail) };
  return {
    ruleId,
    ...n('lastCompletedSlot'),
    ...n('inProgressSlot'),
    ...n('inProgressSince'),
    ...n('snapshotOffset'),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(
  value: Record<string, unknown>,
  keys: readonly string[],
  what: string,
  fail: Fail,
): void {
  const unknown = Object.keys(value).find((k) => !keys.includes(k));
  if (unknown !== undefined) fail(`${what} has an unknown field "${unknown}"`);
}

function text(value: unknown, what: string, fail: Fail): string {
  return typeof value === 'string' ? value : fail(`${what} must be a string`);
}

/** A non-negative safe integer: offsets, counts, epoch ms. */
function count(value: unknown, what: string, fail: Fail): number {
  return Number.isSafeInteger(value) && (value as number) >= 0
    ? (value as number)
    : fail(`${what} must be a non-negative whole number`);
}

function nullableCount(value: unknown, what: string, fail: Fail): number | null {
  return value === null ? null : count(value, what, fail);
}

function optional<T>(value: unknown, read: (v: unknown) => T): T | Record<string, never> {
  return value === undefined ? {} : read(value);
}
