/**
 * ledgerbot as a library: run declarative rules against a Canton participant from your own
 * process, or test them against the embedded sandbox.
 *
 * @example A bot in your process (docs/runtime.md)
 * ```ts
 * import { readFile } from 'node:fs/promises';
 * import { createBot, LedgerClient, loadRulesOrThrow, openSqliteStore } from 'ledgerbot';
 *
 * const parties = { issuer: 'issuer::1220…', payer: 'payer::1220…' }; // alias → party id
 * const path = 'rules/accept-small-invoices.yaml';
 * const ledger = await LedgerClient.create({ url: 'http://127.0.0.1:7575' });
 * const bot = createBot({
 *   rules: loadRulesOrThrow([{ path, text: await readFile(path, 'utf8') }], { parties }),
 *   parties,
 *   userId: 'ledgerbot',
 *   ledger,
 *   store: openSqliteStore({ dir: '.state' }), // closed by bot.stop()
 * });
 * await bot.start(); // no I/O before this
 * // …
 * await bot.stop();
 * await ledger.close();
 * ```
 *
 * @example The same bot against an in-process participant, in a test (docs/sandbox.md)
 * ```ts
 * import { LedgerClient, startSandbox } from 'ledgerbot';
 *
 * const sandbox = await startSandbox({ models: ['model.yaml'], parties: ['issuer', 'payer'] });
 * const ledger = await LedgerClient.create({ url: sandbox.url });
 * // createBot({ ...as above, parties: sandbox.parties, ledger }). A unit test without a ledger
 * // injects `clock: new FakeClock()` and `random: new SeededRandom(1)` instead.
 * await ledger.close();
 * await sandbox.stop();
 * ```
 *
 * @example Rules type-checked against your Daml packages (docs/runtime.md)
 * ```ts
 * import { readFile } from 'node:fs/promises';
 * import { loadRulesOrThrow, PackageCatalogue, ParticipantPackageSource, readDar } from 'ledgerbot';
 *
 * const dar = await readDar(await readFile('my-app.dar'), { source: 'my-app.dar' }); // DamlLfError
 * let packages = PackageCatalogue.create(dar.packages.map((p) => p.signature));
 * // Or every package of the participant (complete: an unknown package name is then an error):
 * const read = await new ParticipantPackageSource({ ledger }).read();
 * packages = PackageCatalogue.create(read.packages, { complete: read.unreadable.length === 0 });
 * // Sandbox models as the sandbox serves them: loadModels(sources, { packages }).packages
 * const rules = loadRulesOrThrow(files, { parties, packages }); // a misspelt field: RuleError
 * // createBot({ ...as above, rules, packageNameOf: (id) => packages.packageNameOf(id) })
 * ```
 *
 * The exports come in three groups: the everyday API, the errors it throws, and the helpers
 * for tests. Anything not exported here is internal and may change without notice.
 */

// ─── Everyday API ────────────────────────────────────────────────────────────────────────────

// The bot: follows the ledger, runs the rules, submits each command exactly once.
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
export { compileBotOptions, type CompiledBotOptions } from './runtime/compile-bot-options.js';
export type { BotLedger } from './runtime/bot-ledger.js';
export type { BotScheduleOptions } from './runtime/bot-schedules.js';
export type { LedgerSlotSourceOptions } from './runtime/ledger-slot-source.js';
export type { SlotSnapshotSource, SlotSubmitContext } from './schedule/run-slot.js';
export type { DedupConfig, StartPosition } from './runtime/config/bot-config.js';
export type { BotMetrics, BotMetricsSnapshot, RuleCounters } from './runtime/bot-metrics.js';
export type { RuleSetDiff, RuleVersion } from './runtime/rule-set-diff.js';
export type { IntentEvent } from './runtime/submission-tracker.js';
export type { Logger } from './core/logger.js';
export {
  startOpsServer,
  type OpsServer,
  type OpsServerOptions,
  type ReloadOutcome,
} from './runtime/ops/ops-server.js';

// Rules: load and compile rule files; evaluate one event; run rule tests.
export type { LoadRulesOptions, LoadRulesResult, RuleFile } from './rules/load-rules.js';
export { loadRules, loadRulesOrThrow } from './rules/load-rules.js';
export type { RuleSet } from './rules/compiled-rule.js';
export type { RuleProblem, RuleProblemCode } from './rules/rule-problem.js';
export { formatRuleProblem } from './rules/rule-problem.js';
export type {
  EvaluateOptions,
  EvaluationContext,
  EventInput,
  TransactionInfo,
} from './rules/evaluate.js';
export { evaluate } from './rules/evaluate.js';
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

// Daml packages: read DARs and DALFs (bytes in, no I/O), what each package declares, and the
// catalogue rules are type-checked against.
export { readDar, type Dar, type ReadDarOptions } from './daml-lf/read-dar.js';
export {
  readDalf,
  readPackagePayload,
  type PackageArchive,
  type ReadPackageOptions,
} from './daml-lf/read-dalf.js';
export { encodePackage, type PackageDraft } from './daml-lf/encode-package.js';
export { writeDar, type WriteDarOptions } from './daml-lf/write-dar.js';
export {
  PackageCatalogue,
  type CatalogueEntry,
  type EntityRef,
  type PackageCatalogueOptions,
  type ResolvedType,
} from './daml-lf/package-catalogue.js';
export type {
  ChoiceSignature,
  DataTypeShape,
  DataTypeSignature,
  FieldSignature,
  InterfaceSignature,
  ModuleSignature,
  PackageSignature,
  TemplateSignature,
  TypeSynonymSignature,
} from './daml-lf/package-signature.js';
export { showType, type DamlType, type NatType, type TypeConRef } from './daml-lf/daml-type.js';
// The participant's packages as signatures, each id read once per source.
export {
  ParticipantPackageSource,
  type PackageReadStats,
  type ParticipantPackages,
  type ParticipantPackageSourceOptions,
  type ParticipantReadOptions,
  type UnreadablePackage,
} from './runtime/participant-package-source.js';

// The sandbox: an embedded participant for tests and demos (docs/sandbox.md).
export type { Sandbox, SandboxUserSpec, StartSandboxOptions } from './sandbox/start-sandbox.js';
export { startSandbox } from './sandbox/start-sandbox.js';
export { loadModel, type LoadModelOptions } from './sandbox/model/load-model.js';
export {
  loadModels,
  type LoadedModels,
  type LoadModelsOptions,
  type ModelSource,
} from './sandbox/model/load-models.js';
export { modelSignature } from './sandbox/model/model-signature.js';

// The JSON Ledger API v2 client (docs/ledger-client.md).
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
export { LedgerClient } from './ledger/ledger-client.js';
export type { LedgerConnectionOptions, TlsOptions } from './ledger/ledger-connection.js';
export type { CallOptions } from './ledger/http-transport.js';
export type { StreamOptions } from './ledger/ws/stream-context.js';
export type { ReconnectListener } from './ledger/ws/resumable-stream.js';
export type { StreamUpdatesRequest, UpdateElement } from './ledger/ws/update-stream.js';
export type { CompletionElement, StreamCompletionsRequest } from './ledger/ws/completion-stream.js';
export type {
  ActiveContractsMode,
  ActiveContractsOptions,
  ActiveContractsRequest,
} from './ledger/active-contracts.js';
export type {
  EventFormatOptions,
  TransactionShape,
  UpdateFormatOptions,
} from './ledger/filters.js';
export { eventFormat, transactionFormat, updateFormat } from './ledger/filters.js';
export type { AuthProvider } from './ledger/auth/auth-provider.js';
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
// What an error means for a retry, and the named questions about it.
export type { Classification } from './ledger/classify.js';
export { classify, retryDelayHintMs } from './ledger/classify.js';
export {
  isAuthRejection,
  isStreamAuthExpiry,
  isTokenRejected,
  isValueTranscodingFailure,
  needsFreshToken,
} from './ledger/error-checks.js';
export { completionError, parseCompletionStatus } from './ledger/completion-status.js';
export type { JsCantonError } from './ledger/js-canton-error.js';

// The store: the checkpoint, the intent journal and the dead letters.
export { openSqliteStore, type SqliteStoreOptions } from './store/open-sqlite-store.js';
export type { DeadLetter, IntentRecord, IntentState, Store } from './store/store.js';
export type { JournalQueries } from './store/journal-queries.js';
export { storeQueries } from './store/store-queries.js';
export type {
  JournalContents,
  JournalIntentRow,
  JournalTransfer,
} from './store/journal-transfer.js';
export type {
  ContractTriggerKey,
  EventTriggerKey,
  SlotTriggerKey,
  TriggerKey,
} from './core/trigger-key.js';

// ─── Errors ──────────────────────────────────────────────────────────────────────────────────
// What the functions above throw, each a LedgerbotError; `classify(err)` says whether a retry
// can help.

export { LedgerbotError } from './core/ledgerbot-error.js';
export { AbortError } from './core/abort-error.js';
export { IllegalStateError } from './core/illegal-state-error.js';
export { LedgerApiError } from './ledger/ledger-api-error.js';
export type { TransportFailure } from './ledger/ledger-transport-error.js';
export { LedgerTransportError } from './ledger/ledger-transport-error.js';
export { LedgerUsageError } from './ledger/ledger-usage-error.js';
export type { AuthErrorCode } from './ledger/auth/auth-error.js';
export { AuthError } from './ledger/auth/auth-error.js';
export { RuleError } from './rules/rule-error.js';
export { RuntimeError, type RuntimeErrorCode } from './runtime/runtime-error.js';
export { StoreError, type StoreErrorCode } from './store/store-error.js';
export { SandboxConfigError } from './sandbox/start-sandbox.js';
export { ModelError } from './sandbox/model/model-error.js';
export { DamlLfError, type DamlLfErrorCode } from './daml-lf/daml-lf-error.js';
// Not thrown: what an intent record (retryDeadLetter, the `intent` event) carries in place of a
// journalled payload this version cannot submit.
export {
  SubmissionPayloadError,
  type SubmissionPayloadErrorCode,
} from './runtime/submission-payload-error.js';

// ─── Testing helpers ─────────────────────────────────────────────────────────────────────────
// Time and randomness are injected (createBot's and startSandbox's `clock` and `random`): a test
// drives them, and a seed replays a run. The sandbox (above) is the ledger for tests.

export type { Clock, TimerHandle } from './core/clock.js';
export { systemClock } from './core/clock.js';
export { FakeClock } from './core/fake-clock.js';
export type { Random } from './core/random.js';
export { systemRandom } from './core/random.js';
export { SeededRandom } from './core/seeded-random.js';
// Schedule rules on a FakeClock: createBot's `schedule: { scheduler: clockSlotScheduler(clock) }`.
export { clockSlotScheduler, type SlotScheduler } from './schedule/slot-scheduler.js';
