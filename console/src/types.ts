// The JSON the ops server answers with (docs/operations-api.md), as far as the page reads it.
// Fields the server may not have (an older bot) are optional.

export type IntentState =
  'pending' | 'submitted' | 'succeeded' | 'duplicate' | 'rejected' | 'dead-lettered';

export const INTENT_STATES: readonly IntentState[] = [
  'pending',
  'submitted',
  'succeeded',
  'duplicate',
  'rejected',
  'dead-lettered',
];

export type Session = {
  readonly authRequired: boolean;
  readonly authenticated: boolean;
  readonly readOnly: boolean;
};

export type Status = {
  readonly state: string;
  readonly shadow?: boolean;
  readonly readOnly?: boolean;
  readonly startedAt?: string | null;
  readonly participant?: { readonly url: string; readonly version: string | null };
  readonly stream?: { readonly connected: boolean; readonly reconnects?: number };
  readonly ready?: { readonly ok: boolean; readonly reason: string | null };
  readonly checkpoint?: number | null;
  readonly processedOffset?: number | null;
  readonly ledgerEnd?: number | null;
  readonly lag?: number | null;
  readonly inFlight?: number;
  readonly waitingForAdmission?: number;
  readonly deadLetters?: number | null;
  readonly intents?: Partial<Record<IntentState, number>> | null;
  readonly rate?: {
    readonly bucketSeconds: number;
    readonly submitted: readonly number[];
    readonly completed: readonly number[];
  };
  /** A fleet member's fleet (docs/operations-api.md). */
  readonly fleet?: {
    readonly name?: string;
    readonly instanceId?: string;
    readonly running?: readonly string[];
    /** This member's rules whose bot is still starting (not in `running` yet). */
    readonly starting?: readonly string[];
    readonly members?: readonly { readonly instanceId: string; readonly live?: boolean }[];
    readonly owners?: readonly { readonly ruleId: string; readonly owner?: string | null }[];
    readonly error?: string;
  };
};

export type RuleState = 'active' | 'paused' | 'resuming' | 'disabled';

export type RuleRow = {
  readonly id: string;
  readonly description?: string | null;
  readonly trigger: string;
  readonly template?: string | null;
  readonly choice?: string | null;
  readonly cron?: string | null;
  readonly timezone?: string | null;
  readonly nextSlot?: string | null;
  readonly state: RuleState;
  readonly pausedAt?: string;
  readonly pausedAtOffset?: number;
  readonly counts?: {
    readonly fired: number;
    readonly succeeded: number;
    readonly failed: number;
    readonly deadLettered: number;
  };
  readonly lastFiredAt?: string | null;
  readonly file?: string;
  readonly line?: number;
  readonly revision?: number;
  readonly hash?: string;
};

export type IntentView = {
  readonly commandId: string;
  readonly ruleId: string;
  readonly state: IntentState;
  readonly attempts: number;
  readonly offset: number;
  readonly updatedAt: string;
  readonly error?: unknown;
};

export type TriggerView =
  | { readonly kind: 'event'; readonly updateId: string; readonly nodeId: number }
  | { readonly kind: 'slot'; readonly slot: string; readonly contractId: string }
  | { readonly kind: 'contract'; readonly contractId: string; readonly nodeId: number };

export type Attempt = {
  readonly n: number;
  readonly submissionId: string;
  readonly at: string;
  readonly outcome: string;
  readonly error?: unknown;
};

export type IntentDetail = Omit<IntentView, 'attempts'> & {
  /** The number of attempts, or (a server that sends it so) the list itself. */
  readonly attempts: number | readonly Attempt[];
  /** Every attempt, oldest first. */
  readonly attemptList?: readonly Attempt[];
  readonly revision?: number;
  readonly actAs?: readonly string[];
  readonly trigger?: TriggerView;
  readonly event?: {
    readonly updateId: string | null;
    readonly offset: number;
    readonly contractId: string | null;
  };
  readonly command?: unknown;
  readonly createdAt?: string;
};

export type DeadLetterView = {
  readonly commandId: string;
  readonly ruleId: string;
  readonly revision: number;
  readonly actAs: readonly string[];
  readonly offset: number;
  readonly trigger: TriggerView;
  readonly attempts: number;
  readonly error: unknown;
  readonly deadLetteredAt: string;
};

export type ConditionResult = 'true' | 'false' | 'error' | 'skipped';

export type Explanation = {
  readonly updateId: string;
  readonly offset: number;
  readonly recordTime?: string | null;
  readonly events: readonly {
    readonly nodeId: number;
    readonly kind: string;
    readonly templateId: string;
    readonly contractId: string;
    readonly rules: readonly {
      readonly ruleId: string;
      readonly fired: boolean;
      readonly reason: string | null;
      readonly conditions: readonly {
        readonly text: string;
        readonly result: ConditionResult;
        readonly detail?: string;
      }[];
      readonly commands: readonly unknown[];
    }[];
  }[];
};

export type RuleVersion = { readonly id: string; readonly revision: number; readonly hash: string };

export type RuleSetDiff = {
  readonly added: readonly RuleVersion[];
  readonly removed: readonly RuleVersion[];
  readonly changed: readonly RuleVersion[];
  readonly unchanged: number;
};

export type LastReload =
  | { readonly at: string; readonly applied: true; readonly diff: RuleSetDiff }
  | { readonly at: string; readonly applied: false; readonly errors: readonly string[] };

export type ReloadInfo = {
  readonly revision: number | null;
  readonly rules: readonly RuleVersion[];
  readonly last: LastReload | null;
};
