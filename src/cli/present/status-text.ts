import { formatTable } from './format-table.js';

/** The `/status` document (docs/operations-api.md), read tolerantly: fields may be missing. */
export type StatusDocument = {
  readonly state?: string;
  readonly shadow?: boolean;
  readonly startedAt?: string | null;
  readonly stream?: { readonly connected?: boolean; readonly reconnects?: number };
  readonly checkpoint?: number | null;
  readonly processedOffset?: number | null;
  readonly ledgerEnd?: number | null;
  readonly lag?: number | null;
  readonly inFlight?: number;
  readonly waitingForAdmission?: number;
  readonly deadLetters?: number;
  readonly intents?: Readonly<Record<string, number>>;
  readonly rules?: readonly StatusRule[];
  readonly recentIntents?: readonly StatusIntent[];
  /** A fleet member's view of its fleet. */
  readonly fleet?: StatusFleet;
};

type StatusFleet = {
  readonly name?: string;
  readonly instanceId?: string;
  readonly running?: readonly string[];
  readonly starting?: readonly string[];
  readonly members?: readonly {
    readonly instanceId: string;
    readonly live?: boolean;
    readonly self?: boolean;
    readonly rules?: number;
    readonly heartbeatAt?: string;
  }[];
  readonly owners?: readonly {
    readonly ruleId: string;
    readonly owner?: string | null;
    readonly generation?: number;
  }[];
  readonly error?: string;
};

type StatusRule = {
  readonly id: string;
  readonly revision?: number;
  readonly trigger?: string;
  readonly state?: string;
  readonly pausedAt?: string;
  readonly pausedAtOffset?: number;
  readonly file?: string;
  readonly line?: number;
};

type StatusIntent = {
  readonly commandId: string;
  readonly ruleId?: string;
  readonly state?: string;
  readonly attempts?: number;
  readonly offset?: number;
  readonly updatedAt?: string;
  readonly error?: { readonly code?: string; readonly message?: string };
};

/** How many recent intents the table shows (the document has up to 50). */
const RECENT_SHOWN = 10;

export function formatStatus(s: StatusDocument): string {
  const n = (v: number | null | undefined): string =>
    v === null || v === undefined ? '-' : String(v);
  const stream = s.stream?.connected === true ? 'connected' : 'DISCONNECTED';
  const fields: [string, string][] = [
    [
      'bot',
      `${s.state ?? 'unknown'}${s.shadow === true ? ' (shadow: submits nothing)' : ''}${s.startedAt == null ? '' : ` since ${s.startedAt}`}`,
    ],
    ['stream', `${stream}, ${n(s.stream?.reconnects)} reconnect(s)`],
    ['checkpoint', n(s.checkpoint)],
    ['processed', n(s.processedOffset)],
    ['ledger end', n(s.ledgerEnd)],
    ['lag', s.lag === null || s.lag === undefined ? '-' : `${s.lag} offset(s)`],
    ['in flight', `${n(s.inFlight)} (${n(s.waitingForAdmission)} waiting for admission)`],
    ['dead letters', n(s.deadLetters)],
    [
      'intents',
      Object.entries(s.intents ?? {})
        .map(([state, count]) => `${count} ${state}`)
        .join(', ') || '-',
    ],
  ];
  const width = Math.max(...fields.map(([label]) => label.length));
  const head = fields.map(([label, value]) => `${label.padEnd(width)}  ${value}\n`).join('');
  const rules = s.rules ?? [];
  const ruleTable = formatTable(
    ['RULE', 'REV', 'TRIGGER', 'STATE', 'WHERE'],
    rules.map((r) => [
      r.id,
      n(r.revision),
      r.trigger ?? '-',
      r.state === 'paused' || r.state === 'resuming'
        ? `${r.state} (since offset ${n(r.pausedAtOffset)})`
        : (r.state ?? '-'),
      r.file === undefined ? '-' : `${r.file}${r.line === undefined ? '' : `:${r.line}`}`,
    ]),
  );
  const recent = (s.recentIntents ?? []).slice(0, RECENT_SHOWN);
  const intentTable =
    recent.length === 0
      ? '(none yet)\n'
      : formatTable(
          ['UPDATED', 'RULE', 'STATE', 'ATTEMPTS', 'OFFSET', 'COMMAND ID', 'ERROR'],
          recent.map((i) => [
            i.updatedAt ?? '-',
            i.ruleId ?? '-',
            i.state ?? '-',
            n(i.attempts),
            n(i.offset),
            i.commandId,
            i.error === undefined ? '' : `${i.error.code ?? ''} ${i.error.message ?? ''}`.trim(),
          ]),
        );
  const more = (s.recentIntents?.length ?? 0) - recent.length;
  return [
    head,
    ...(s.fleet === undefined ? [] : formatFleet(s.fleet)),
    `rules (${rules.length}):`,
    ruleTable,
    `last intents${more > 0 ? ` (newest ${recent.length}; --json shows ${more} more)` : ''}:`,
    intentTable,
  ].join('\n');
}

/** The fleet's members and who owns which rule (a fleet member's `/status`). */
function formatFleet(f: StatusFleet): string[] {
  if (f.error !== undefined) return [`fleet ${f.name ?? ''}: ${f.error}\n`];
  const members = formatTable(
    ['MEMBER', 'LIVE', 'RULES', 'HEARTBEAT'],
    (f.members ?? []).map((m) => [
      `${m.instanceId}${m.self === true ? ' (this one)' : ''}`,
      m.live === true ? 'yes' : 'no',
      m.rules === undefined ? '-' : String(m.rules),
      m.heartbeatAt ?? '-',
    ]),
  );
  const owners = formatTable(
    ['RULE', 'OWNER', 'GENERATION'],
    (f.owners ?? []).map((o) => [
      o.ruleId,
      o.owner ?? '(none: being taken over)',
      o.generation === undefined ? '-' : String(o.generation),
    ]),
  );
  const starting =
    (f.starting ?? []).length === 0 ? '' : `; its bot is starting ${f.starting!.join(', ')}`;
  return [
    `fleet ${f.name ?? '-'}: this member ${f.instanceId ?? '-'} runs ${(f.running ?? []).join(', ') || 'no rule'}${starting}\n`,
    members,
    owners,
  ];
}
