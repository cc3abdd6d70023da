import { systemClock, type Clock } from '../core/clock.js';
import { parseDuration } from '../core/duration.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { systemRandom, type Random } from '../core/random.js';
import { SeededRandom } from '../core/seeded-random.js';
import { sha256Hex } from '../core/sha256-hex.js';
import type { Right } from '../ledger/wire/wire-types.js';
import { LedgerEngine } from './engine/ledger-engine.js';
import { loadSandboxPackages, type SandboxDar } from './load-sandbox-packages.js';
import type { PackageModel } from './model/model-types.js';
import { SandboxConfigError } from './sandbox-config-error.js';
import { CommandPipeline } from './server/command-pipeline.js';
import { DedupTracker } from './server/dedup-tracker.js';
import { FaultInjector } from './server/fault-injector.js';
import { SandboxAuth, type SandboxAuthMode } from './server/sandbox-auth.js';
import type { SandboxContext, SandboxLimits } from './server/sandbox-context.js';
import { SandboxServer } from './server/sandbox-server.js';
import { StreamHub } from './server/stream-hub.js';

/** A user to create at start: `alice-bot:Alice,Bob` or the object form. */
export type SandboxUserSpec =
  | string
  | {
      readonly id: string;
      readonly actAs?: readonly string[];
      readonly readAs?: readonly string[];
      readonly admin?: boolean;
      readonly readAsAnyParty?: boolean;
    };

export type StartSandboxOptions = {
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /**
   * DARs to register (paths, or their bytes): every package of each is listed by
   * `GET /v2/packages` and served by `GET /v2/packages/{id}`, and their templates can be used
   * (see docs/sandbox.md, "DAR templates").
   */
  readonly dars?: readonly SandboxDar[];
  /**
   * Model file paths, or models already loaded with `loadModel`. Paths are loaded after the
   * DARs, each after the models whose interfaces it implements.
   */
  readonly models?: readonly (string | PackageModel)[];
  /** Party id hints to allocate at start (`Alice` → `Alice::1220…`). */
  readonly parties?: readonly string[];
  /** Users to create; their parties are allocated if needed. */
  readonly users?: readonly SandboxUserSpec[];
  /** Default 'none'. */
  readonly auth?: SandboxAuthMode;
  /** Seeds every random choice (ids, faults); default: a random seed. */
  readonly seed?: number;
  /** Maximum deduplication duration, in ms or as a duration ("7d"); default 7 days. */
  readonly maxDedup?: number | string;
  /**
   * pekko-http's server idle-timeout: a websocket with no frame either way for this long is
   * closed abruptly (the client sees 1006), as are idle keep-alive connections. In ms or as a
   * duration ("60s"); default 60 s as on Canton; 0 turns it off.
   */
  readonly idleTimeout?: number | string;
  /** The participant's name (before `::`); default "sandbox". */
  readonly participantName?: string;
  readonly clock?: Clock;
  /** Overrides the seeded Random for ids. */
  readonly random?: Random;
  readonly logger?: Logger;
  readonly limits?: Partial<SandboxLimits>;
};

export type Sandbox = {
  /** `http://host:port` (use `ws://` with the same authority for streams). */
  readonly url: string;
  readonly participantId: string;
  /** The party ids allocated at start, by hint. */
  readonly parties: Readonly<Record<string, string>>;
  /** Idempotent: closes every socket and the listener. */
  stop(): Promise<void>;
};

export { SandboxConfigError } from './sandbox-config-error.js';

export const SANDBOX_ADMIN_USER = 'participant_admin';
const DEFAULT_LIMITS: SandboxLimits = {
  listMaxElements: 200,
  listWaitMs: 500,
  submitAndWaitTimeoutMs: 20_000,
  checkpointIntervalMs: 1_000,
  defaultPageSize: 100,
  maxPageSize: 1_000,
  idleTimeoutMs: 60_000,
  // About 500 transactions of the usual size.
  streamBufferBytes: 1 << 20,
};

/** A duration option in ms or as text ("7d", "60s"); "0" alone is accepted too. */
function durationMs(name: string, value: number | string): number {
  let ms: number;
  try {
    ms = typeof value === 'number' ? value : value.trim() === '0' ? 0 : parseDuration(value);
  } catch (err) {
    throw new SandboxConfigError(`${name}: ${(err as Error).message}`, { cause: err });
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw new SandboxConfigError(`${name} must be a duration of 0 or more, not ${String(value)}`);
  }
  return ms;
}

function parseUserSpec(spec: SandboxUserSpec): Exclude<SandboxUserSpec, string> {
  if (typeof spec !== 'string') return spec;
  const m = /^([^:]+):(.*)$/.exec(spec);
  if (m === null) {
    throw new SandboxConfigError(
      `user "${spec}" must look like alice-bot:Alice,Bob (user id, colon, parties to act as)`,
    );
  }
  const parties = m[2]!
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return { id: m[1]!, actAs: parties };
}

function hexOf(random: Random, chars: number): string {
  let out = '';
  while (out.length < chars)
    out += Math.floor(random.next() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, chars);
}

/**
 * Starts an embedded participant speaking the JSON Ledger API v2 on a real socket. See
 * docs/sandbox.md for what it serves.
 */
export async function startSandbox(options: StartSandboxOptions = {}): Promise<Sandbox> {
  const seed = options.seed ?? Math.floor(systemRandom.next() * 0x1_0000_0000);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const random = options.random ?? new SeededRandom(seed);
  const misc = new SeededRandom((seed ^ 0x7a3b_19c5) >>> 0);
  const faultRandom = new SeededRandom((seed ^ 0x5eed_fa17) >>> 0);
  const name = options.participantName ?? 'sandbox';
  const participantId = `${name}::1220${sha256Hex(`ledgerbot-sandbox:${name}:${seed}`)}`;
  const maxDedupMs = durationMs('maxDedup', options.maxDedup ?? 7 * 86_400_000);
  const idleTimeoutMs =
    options.idleTimeout === undefined ? undefined : durationMs('idleTimeout', options.idleTimeout);
  const packages = await loadSandboxPackages({
    dars: options.dars ?? [],
    models: options.models ?? [],
  });
  const engine = LedgerEngine.create({ models: packages.models, participantId, random, clock });

  const parties: Record<string, string> = {};
  const partyOf = (hint: string): string => {
    const known = parties[hint];
    if (known !== undefined) return known;
    const r = engine.allocateParty(hint);
    if (!r.ok) throw new SandboxConfigError(`cannot allocate party "${hint}": ${r.error.cause}`);
    parties[hint] = r.value.party;
    return r.value.party;
  };
  for (const hint of options.parties ?? []) partyOf(hint);
  const admin = engine.createUser({ id: SANDBOX_ADMIN_USER, isDeactivated: false }, [
    { kind: { ParticipantAdmin: { value: {} } } },
  ]);
  if (!admin.ok) throw new SandboxConfigError(admin.error.cause);
  for (const raw of options.users ?? []) {
    const spec = parseUserSpec(raw);
    const actAs = (spec.actAs ?? []).map(partyOf);
    const readAs = (spec.readAs ?? []).map(partyOf);
    const rights: Right[] = [
      ...actAs.map((party) => ({ kind: { CanActAs: { value: { party } } } })),
      ...readAs.map((party) => ({ kind: { CanReadAs: { value: { party } } } })),
      ...(spec.admin === true ? [{ kind: { ParticipantAdmin: { value: {} } } }] : []),
      ...(spec.readAsAnyParty === true ? [{ kind: { CanReadAsAnyParty: { value: {} } } }] : []),
    ];
    const primary = actAs[0];
    const r = engine.createUser(
      {
        id: spec.id,
        isDeactivated: false,
        ...(primary === undefined ? {} : { primaryParty: primary }),
      },
      rights,
    );
    if (!r.ok) throw new SandboxConfigError(`cannot create user "${spec.id}": ${r.error.cause}`);
  }

  const limits: SandboxLimits = {
    ...DEFAULT_LIMITS,
    ...options.limits,
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
  };
  const auth = new SandboxAuth({
    mode: options.auth ?? 'none',
    participantId,
    clock,
    users: {
      rightsOf: (userId) => {
        const user = engine.user(userId);
        if (user === undefined || user.isDeactivated === true) return undefined;
        const r = engine.userRights(userId);
        return r.ok ? r.value : undefined;
      },
    },
  });
  const dedup = new DedupTracker(maxDedupMs);
  const faults = new FaultInjector(faultRandom);
  const hub = new StreamHub(engine, clock, limits.checkpointIntervalMs);
  const traceId = (): string => hexOf(misc, 32);
  const pipeline = new CommandPipeline({
    engine,
    dedup,
    faults,
    auth,
    clock,
    random: misc,
    participant: name,
    prunedAtMs: () => ctx.prunedAtMs,
    traceId,
  });
  const ctx: SandboxContext = {
    engine,
    auth,
    pipeline,
    dedup,
    faults,
    hub,
    clock,
    random: misc,
    logger,
    participantId,
    participantName: name,
    limits,
    version: '3.5.10-ledgerbot-sandbox',
    archives: packages.archives,
    traceId,
    prunedAtMs: 0,
  };
  hub.start();
  const server = new SandboxServer(ctx);
  const host = options.host ?? '127.0.0.1';
  let port: number;
  try {
    port = await server.listen(host, options.port ?? 0);
  } catch (err) {
    hub.stop();
    throw new SandboxConfigError(
      `cannot listen on ${host}:${options.port ?? 0}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  logger.info({ participantId, port, seed }, 'sandbox ready');
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${authority}`,
    participantId,
    parties,
    stop: () => {
      stopping ??= (async () => {
        hub.stop();
        await server.close();
      })();
      return stopping;
    },
  };
}
