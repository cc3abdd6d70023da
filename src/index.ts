// The public library API of ledgerbot. Everything a user may import is re-exported here.
export type { Clock, TimerHandle } from './core/clock.js';
export { systemClock } from './core/clock.js';
export { FakeClock } from './core/fake-clock.js';
export type { Random } from './core/random.js';
export { systemRandom } from './core/random.js';
export { SeededRandom } from './core/seeded-random.js';
export { LedgerbotError } from './core/ledgerbot-error.js';
export { IllegalStateError } from './core/illegal-state-error.js';
export { AbortError } from './core/abort-error.js';
export { parseDuration, formatDuration, DurationSyntaxError } from './core/duration.js';
export type { Classification } from './ledger/classify.js';
export {
  classify,
  isAuthRejection,
  isStreamAuthExpiry,
  isTokenRejected,
  isValueTranscodingFailure,
  needsFreshToken,
  retryDelayHintMs,
} from './ledger/classify.js';
export { parseCompletionStatus, completionError } from './ledger/completion-status.js';
export type { AuthProvider } from './ledger/auth/auth-provider.js';
export type { AuthErrorCode } from './ledger/auth/auth-error.js';
export { AuthError } from './ledger/auth/auth-error.js';
export type { AuthConfig, AuthDeps } from './ledger/auth/create-auth-provider.js';
export { createAuthProvider, redactAuthConfig } from './ledger/auth/create-auth-provider.js';
export { NoAuth } from './ledger/auth/no-auth.js';
export { StaticTokenAuth } from './ledger/auth/static-token-auth.js';
export type { TokenFileAuthOptions } from './ledger/auth/token-file-auth.js';
export { TokenFileAuth } from './ledger/auth/token-file-auth.js';
export type {
  OAuth2ClientAuth,
  OAuth2ClientCredentialsOptions,
} from './ledger/auth/oauth2-client-credentials-auth.js';
export { OAuth2ClientCredentialsAuth } from './ledger/auth/oauth2-client-credentials-auth.js';
export type {
  CallOptions,
  HttpMethod,
  HttpRequestOptions,
  HttpResponse,
  HttpTransport,
  ResolvedLedgerConnection,
  TlsMaterial,
} from './ledger/http-transport.js';
export { createHttpTransport, loadTlsMaterial } from './ledger/http-transport.js';
export type {
  EventFormatOptions,
  TransactionShape,
  UpdateFormatOptions,
} from './ledger/filters.js';
export { eventFormat, transactionFormat, updateFormat } from './ledger/filters.js';
export type {
  ConnectedSynchronizersQuery,
  ListActiveContractsRequest,
  ListOptions,
  ListPartiesQuery,
  ListUpdatesRequest,
  ListUsersQuery,
  Readiness,
  TransactionByIdRequest,
} from './ledger/ledger-client.js';
export { LedgerClient, MAX_LIST_LIMIT } from './ledger/ledger-client.js';
export { LedgerUsageError } from './ledger/ledger-usage-error.js';
export { LedgerApiError } from './ledger/ledger-api-error.js';
export type { TransportFailure } from './ledger/ledger-transport-error.js';
export { LedgerTransportError } from './ledger/ledger-transport-error.js';
export type { LedgerConnectionOptions, TlsOptions } from './ledger/ledger-connection.js';
export type { JsCantonError } from './ledger/js-canton-error.js';
export type { StreamContext, StreamOptions } from './ledger/ws/stream-context.js';
export { streamContext } from './ledger/ws/stream-context.js';
export type { WsRequestStreamOptions } from './ledger/ws/ws-request-stream.js';
export { WsRequestStream } from './ledger/ws/ws-request-stream.js';
export type { ReconnectListener, ResumableStreamOptions } from './ledger/ws/resumable-stream.js';
export { ResumableStream, DEFAULT_STREAM_BACKOFF } from './ledger/ws/resumable-stream.js';
export type { StreamUpdatesRequest, UpdateElement } from './ledger/ws/update-stream.js';
export { streamUpdates } from './ledger/ws/update-stream.js';
export type { CompletionElement, StreamCompletionsRequest } from './ledger/ws/completion-stream.js';
export { streamCompletions } from './ledger/ws/completion-stream.js';
export { activeContractsSocket } from './ledger/ws/active-contracts-socket.js';
export type {
  ActiveContractsMode,
  ActiveContractsOptions,
  ActiveContractsRequest,
} from './ledger/active-contracts.js';
export { readActiveContracts } from './ledger/active-contracts.js';
export type { Sandbox, SandboxUserSpec, StartSandboxOptions } from './sandbox/start-sandbox.js';
export { startSandbox, SandboxConfigError } from './sandbox/start-sandbox.js';
export type { LoadRulesOptions, LoadRulesResult, RuleFile } from './rules/load-rules.js';
export { loadRules, loadRulesOrThrow } from './rules/load-rules.js';
export type {
  CompiledAction,
  CompiledRule,
  CompiledValue,
  RuleSet,
  SourcePos,
  TemplateRef,
  Trigger,
} from './rules/compiled-rule.js';
export type { RuleProblem, RuleProblemCode } from './rules/rule-problem.js';
export { formatRuleProblem } from './rules/rule-problem.js';
export { RuleError } from './rules/rule-error.js';
export type {
  CatalogueField,
  CatalogueTemplate,
  CatalogueType,
  PackageCatalogue,
} from './rules/package-catalogue.js';
export { RULES_SCHEMA } from './rules/rules-schema.js';
export type { CommandIdInput } from './rules/command-id.js';
export type {
  ContractTriggerKey,
  EventTriggerKey,
  SlotTriggerKey,
  TriggerKey,
} from './core/trigger-key.js';
export { commandIdFor } from './rules/command-id.js';
export type { RuleIndex } from './rules/rule-index.js';
export { indexRules } from './rules/rule-index.js';
export type {
  EvaluateOptions,
  EvaluationContext,
  EventInput,
  TransactionInfo,
} from './rules/evaluate.js';
export { evaluate, evaluateTransaction } from './rules/evaluate.js';
export type { SlotContext } from './rules/evaluate-slot.js';
export { evaluateSlot } from './rules/evaluate-slot.js';
export type {
  ConditionOutcome,
  EvaluationResult,
  Explanation,
  Intent,
  RuleEvaluationError,
  RuleEvaluationErrorCode,
  TriggerMismatch,
} from './rules/evaluation-result.js';
export { formatRuleEvaluationError } from './rules/evaluation-result.js';
export { formatExplanation } from './rules/format-explanation.js';
export type { RuleTestFile, RuleTestFileResult } from './rules/rule-tests/index.js';
export { formatRuleTestResult, parseRuleTestFile, runRuleTests } from './rules/rule-tests/index.js';

// The trigger runtime and its store.
export {
  createBot,
  type Bot,
  type BotEventMap,
  type BotOptions,
  type BotState,
  type BotSubmissionOptions,
  type IntentSummary,
  type RuleStatus,
} from './runtime/bot.js';
export type { BotLedger } from './runtime/bot-ledger.js';
export { BotMetrics, type BotMetricsSnapshot, type RuleCounters } from './runtime/bot-metrics.js';
export {
  diffRuleSets,
  ruleContentHash,
  type RuleSetDiff,
  type RuleVersion,
} from './runtime/rule-set-diff.js';
export {
  startOpsServer,
  type OpsServer,
  type OpsServerOptions,
  type ReloadOutcome,
} from './runtime/ops/ops-server.js';
export {
  createOpsMetrics,
  type OpsMetrics,
  type OpsMetricsOptions,
} from './runtime/ops/ops-metrics.js';
export { RuntimeError, type RuntimeErrorCode } from './runtime/runtime-error.js';
// What an intent record carries in place of a journalled payload this version cannot submit.
export {
  SubmissionPayloadError,
  type SubmissionPayloadErrorCode,
} from './runtime/submission-payload-error.js';
export type { IntentEvent } from './runtime/submission-tracker.js';
export { openSqliteStore, type SqliteStoreOptions } from './store/open-sqlite-store.js';
export type { Store, IntentRecord, IntentState, DeadLetter } from './store/store.js';

// Schedules: pure slot computation, the misfire policy, one slot, the driver.
export { slotsBetween, nextSlots, previousSlot, iterateSlots } from './schedule/slots-between.js';
export {
  slotsToRun,
  DEFAULT_ON_TIME_MS,
  type SlotsToRun,
  type SlotsToRunInput,
} from './schedule/slots-to-run.js';
export {
  runSlot,
  type RunSlotOptions,
  type SlotContract,
  type SlotIntentSink,
  type SlotJournal,
  type SlotRunResult,
  type SlotSnapshotSource,
  type SlotSubmitContext,
} from './schedule/run-slot.js';
export {
  ScheduleDriver,
  type ScheduleDriverOptions,
  type ScheduleRuleStats,
} from './schedule/schedule-driver.js';
export { clockSlotScheduler, type SlotScheduler } from './schedule/slot-scheduler.js';
export { nodeCronSlotScheduler } from './schedule/node-cron-slot-scheduler.js';
export { formatSlot } from './schedule/format-slot.js';
export { ScheduleError, type ScheduleErrorCode } from './schedule/schedule-error.js';
export type { BotScheduleOptions } from './runtime/bot-schedules.js';
export { ledgerSlotSource, type LedgerSlotSourceOptions } from './runtime/ledger-slot-source.js';
