import type { Command } from '../ledger/wire/wire-types.js';
import type { Intent } from '../rules/evaluation-result.js';
import type { IntentSummary } from './recent-intents.js';
import type {
  AttemptOutcome,
  AttemptRecord,
  DeadLetter,
  IntentRecord,
  IntentState,
  TriggerKey,
} from '../store/store.js';

/**
 * The JSON shapes of journal records as the ops API documents them (docs/operations-api.md):
 * one pure mapping, so the ops server, the CLI (which reads the store directly when no bot
 * answers) and any later front end print the same document for the same record.
 */

/** A trigger: epoch-ms slots become ISO 8601 times; only the key's own fields are shown. */
export type TriggerView =
  | { readonly kind: 'event'; readonly updateId: string; readonly nodeId: number }
  | { readonly kind: 'slot'; readonly slot: string; readonly contractId: string }
  | { readonly kind: 'contract'; readonly contractId: string; readonly nodeId: number };

/** `GET /dead-letters`'s summary; `show` adds `payload` and (when recorded) `event`. */
export type DeadLetterView = {
  readonly commandId: string;
  readonly ruleId: string;
  readonly revision: number;
  readonly actAs: readonly string[];
  readonly offset: number;
  readonly trigger: TriggerView;
  readonly attempts: number;
  /** Null when the record has none (the API always has the key). */
  readonly error: unknown;
  readonly deadLetteredAt: string;
  readonly payload?: unknown;
  readonly event?: unknown;
};

/** `GET /intents/{commandId}`'s intent. */
export type IntentView = {
  readonly commandId: string;
  readonly ruleId: string;
  readonly state: IntentState;
  readonly attempts: number;
  readonly offset: number;
  readonly updatedAt: string;
  readonly error?: unknown;
};

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export function triggerView(t: TriggerKey): TriggerView {
  switch (t.kind) {
    case 'contract':
      return { kind: 'contract', contractId: t.contractId, nodeId: t.nodeId };
    case 'event':
      return { kind: 'event', updateId: t.updateId, nodeId: t.nodeId };
    case 'slot':
      return { kind: 'slot', slot: isoTime(t.slot), contractId: t.contractId ?? '' };
  }
}

/** `full`: with the payload and the triggering event, as `GET /dead-letters/{id}` shows it. */
export function deadLetterView(d: DeadLetter, full = false): DeadLetterView {
  const i = d.intent;
  return {
    commandId: i.commandId,
    ruleId: i.ruleId,
    revision: i.revision,
    actAs: i.actAs,
    offset: i.offset,
    trigger: triggerView(i.trigger),
    attempts: i.attempts,
    error: d.error ?? null,
    deadLetteredAt: isoTime(d.deadLetteredAt),
    ...(full ? { payload: i.payload, ...(d.event === undefined ? {} : { event: d.event }) } : {}),
  };
}

/** A journal record as `GET /intents/{commandId}` shows it. */
export function intentView(i: IntentRecord): IntentView {
  return {
    commandId: i.commandId,
    ruleId: i.ruleId,
    state: i.state,
    attempts: i.attempts,
    offset: i.offset,
    updatedAt: isoTime(i.updatedAt),
    // An intent that committed has no error, whatever its earlier attempts met (its attempts say).
    ...(i.lastError === undefined || i.state === 'succeeded' || i.state === 'duplicate'
      ? {}
      : { error: i.lastError }),
  };
}

export type AttemptView = {
  readonly n: number;
  readonly submissionId: string;
  readonly at: string;
  readonly outcome: AttemptOutcome;
  readonly error?: { readonly code: string; readonly message: string };
};

/** `GET /intents/{commandId}`'s intent: the summary, what triggered it, its command, attempts. */
export type IntentDetailView = IntentView & {
  readonly revision: number;
  readonly actAs: readonly string[];
  readonly trigger: TriggerView;
  readonly event: {
    readonly updateId: string | null;
    readonly offset: number;
    /** The contract of the triggering event (or the slot's contract). */
    readonly contractId: string | null;
    /** Of the triggering event, when recorded with the intent. */
    readonly templateId?: string;
    readonly recordTime?: string;
  };
  /** The submitted command as the journal keeps it (no submissionId: each attempt has its own). */
  readonly command: unknown;
  readonly createdAt: string;
  readonly attempts: number;
  readonly attemptList: readonly AttemptView[];
};

/**
 * A journal record with what triggered it, its command and its attempts: `attempts` as the
 * journal keeps them (`Store.getAttempts`), or, without them, the latest one the record tells of.
 */
export function intentDetailView(
  i: IntentRecord,
  attempts?: readonly AttemptRecord[],
  recorded?: unknown,
): IntentDetailView {
  const t = i.trigger;
  const seen = recordedEventOf(recorded);
  return {
    ...intentView(i),
    revision: i.revision,
    actAs: i.actAs,
    trigger: triggerView(t),
    event: {
      updateId: t.kind === 'event' ? t.updateId : null,
      offset: i.offset,
      contractId: t.kind === 'event' ? (seen.contractId ?? null) : (t.contractId ?? null),
      ...(seen.templateId === undefined ? {} : { templateId: seen.templateId }),
      ...(seen.recordTime === undefined ? {} : { recordTime: seen.recordTime }),
    },
    command: i.payload,
    createdAt: isoTime(i.createdAt),
    attemptList:
      attempts === undefined || (attempts.length === 0 && i.attempts > 0)
        ? latestAttemptOf(i)
        : attempts.map(attemptView),
  };
}

/**
 * The contract, template and record time of the event the runtime records with an intent of the
 * update stream (`{updateId, offset, recordTime, event: <the wire event>}`); nothing from
 * anything else.
 */
function recordedEventOf(recorded: unknown): {
  contractId?: string;
  templateId?: string;
  recordTime?: string;
} {
  if (typeof recorded !== 'object' || recorded === null) return {};
  const r = recorded as { recordTime?: unknown; event?: unknown };
  const wire = (typeof r.event === 'object' && r.event !== null ? r.event : {}) as Record<
    string,
    unknown
  >;
  const inner = (wire.CreatedEvent ?? wire.ExercisedEvent ?? wire.ArchivedEvent) as
    { contractId?: unknown; templateId?: unknown } | undefined;
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const out: { contractId?: string; templateId?: string; recordTime?: string } = {};
  const contractId = text(inner?.contractId);
  const templateId = text(inner?.templateId);
  const recordTime = text(r.recordTime);
  if (contractId !== undefined) out.contractId = contractId;
  if (templateId !== undefined) out.templateId = templateId;
  if (recordTime !== undefined) out.recordTime = recordTime;
  return out;
}

function attemptView(a: AttemptRecord): AttemptView {
  return {
    n: a.n,
    submissionId: a.submissionId,
    at: isoTime(a.at),
    outcome: a.outcome,
    ...(a.error === undefined ? {} : { error: a.error }),
  };
}

/**
 * The latest attempt as the record tells of it (its submissionId, and how it ended by the
 * intent's state), for an intent recorded before the journal kept its attempts.
 */
function latestAttemptOf(i: IntentRecord): AttemptView[] {
  if (i.attempts === 0 || i.submissionId === undefined) return [];
  const outcome: AttemptOutcome =
    i.state === 'submitted'
      ? 'pending'
      : i.state === 'pending'
        ? i.inDoubt === true
          ? 'in-doubt'
          : 'retry'
        : i.state;
  const error = errorOf(i.lastError);
  return [
    {
      n: i.attempts,
      submissionId: i.submissionId,
      at: isoTime(i.updatedAt),
      outcome,
      ...(outcome === 'pending' || outcome === 'succeeded' || error === undefined ? {} : { error }),
    },
  ];
}

/** `{code, message}` of a journal error (a JsCantonError or the bot's own error record). */
export function errorOf(e: unknown): { code: string; message: string } | undefined {
  if (e === undefined || e === null) return undefined;
  if (typeof e !== 'object') return { code: 'ERROR', message: JSON.stringify(e) };
  const r = e as { code?: unknown; message?: unknown; cause?: unknown };
  const message =
    typeof r.message === 'string'
      ? r.message
      : typeof r.cause === 'string'
        ? r.cause
        : JSON.stringify(e);
  return { code: typeof r.code === 'string' ? r.code : 'ERROR', message };
}

/** One of the bot's latest intents, as `/status`'s `recentIntents` shows it. */
export function recentIntentView(s: IntentSummary): IntentView {
  return {
    commandId: s.commandId,
    ruleId: s.ruleId,
    state: s.state,
    attempts: s.attempts,
    offset: s.offset,
    updatedAt: isoTime(s.updatedAt),
    ...(s.error === undefined ? {} : { error: s.error }),
  };
}

/** An intent of a schedule slot, as `POST /rules/{id}/run-slot` lists it and run-slot prints it. */
export type SlotIntentView = {
  readonly commandId: string;
  /** The contract the slot iterated over; null for a slot without `forEach`. */
  readonly contractId: string | null;
  readonly command: Command;
  readonly actAs: readonly string[];
  readonly offset: number;
};

export function slotIntentView(
  i: Pick<Intent, 'commandId' | 'triggerKey' | 'command' | 'actAs' | 'offset'>,
): SlotIntentView {
  const t = i.triggerKey;
  return {
    commandId: i.commandId,
    contractId: t.kind === 'slot' ? t.contractId : null,
    command: i.command,
    actAs: i.actAs,
    offset: i.offset,
  };
}
