import { dirname, resolve } from 'node:path';
import { DEFAULTS } from '../../core/defaults.js';
import { parseDuration } from '../../core/duration.js';
import type { AuthConfig } from '../../ledger/auth/create-auth-provider.js';
import type {
  BotConfig,
  DedupConfig,
  LedgerEndpoint,
  StartPosition,
  TlsFiles,
} from './bot-config.js';
import type { PackagePathEntry } from './check-package-paths.js';
import type { RawBotConfig } from './raw-bot-config.js';
import { deepFreeze } from '../../core/deep-freeze.js';

/**
 * A checked config as the BotConfig the bot runs with: durations in milliseconds, paths
 * absolute (relative ones against the file's directory), deeply frozen.
 */
export function compileBotConfig(
  raw: RawBotConfig,
  file: string,
  checked: {
    readonly endpoint: LedgerEndpoint;
    readonly start: StartPosition;
    /** `ledger.packages` with their positions (checkPackagePaths); none when left out. */
    readonly packages?: readonly PackagePathEntry[];
  },
): BotConfig {
  const { endpoint, start } = checked;
  const baseDir = dirname(resolve(file));
  const abs = (p: string): string => resolve(baseDir, p);
  const s = raw.submission;
  const dedup: DedupConfig =
    s.dedup.mode === 'duration'
      ? { mode: 'duration', valueMs: parseDuration(s.dedup.value) }
      : {
          mode: 'offset',
          fallbackMs:
            s.dedup.fallback === undefined
              ? DEFAULTS.submission.dedupFallbackMs
              : parseDuration(s.dedup.fallback),
        };
  const tls = raw.ledger.tls;
  const config: BotConfig = {
    file: resolve(file),
    ledger: {
      endpoint:
        endpoint.kind === 'embedded' ? { ...endpoint, models: endpoint.models.map(abs) } : endpoint,
      userId: raw.ledger.userId,
      auth: resolveAuthPaths(raw.ledger.auth, abs),
      ...(tls === undefined ? {} : { tls: resolveTlsPaths(tls, abs) }),
      apiVersion: raw.ledger.apiVersion,
      packages: (checked.packages ?? []).map((p) => ({
        path: abs(p.path),
        at: `${file}:${p.line}:${p.col}`,
      })),
      pingIntervalMs: parseDuration(raw.ledger.pingInterval),
      ...(raw.ledger.startTimeout === undefined
        ? {}
        : { startTimeoutMs: parseDuration(raw.ledger.startTimeout) }),
    },
    parties: raw.parties,
    rules: [raw.rules].flat().map(abs),
    tests: [raw.tests ?? DEFAULTS.testsDir].flat().map(abs),
    state: {
      dir: abs(raw.state.dir),
      retentionMs: parseDuration(raw.state.retention),
      ...(raw.state.postgres === undefined ? {} : { postgres: { ...raw.state.postgres } }),
    },
    start,
    submission: {
      maxInFlight: s.maxInFlight,
      completionTimeoutMs: parseDuration(s.completionTimeout),
      retry: {
        maxAttempts: s.retry.maxAttempts,
        initialDelayMs: parseDuration(s.retry.initialDelay),
        maxDelayMs: parseDuration(s.retry.maxDelay),
        deadlineMs: parseDuration(s.retry.deadline),
      },
      dedup,
    },
    ...(raw.fleet === undefined
      ? {}
      : {
          fleet: { name: raw.fleet.name, leasePeriodMs: parseDuration(raw.fleet.leasePeriod) },
        }),
    ...(raw.http === undefined
      ? {}
      : {
          http: {
            port: raw.http.port,
            host: raw.http.host,
            readyMaxLag: raw.http.readyMaxLag,
            readOnly: raw.http.readOnly,
            allowedHosts: raw.http.allowedHosts,
            ...(raw.http.token === undefined ? {} : { token: raw.http.token }),
          },
        }),
    log: {
      level: raw.log.level,
      ...(raw.log.pretty === undefined ? {} : { pretty: raw.log.pretty }),
    },
  };
  return deepFreeze(config);
}

/** A token file is read relative to the config file, like every other path in it. */
function resolveAuthPaths(auth: AuthConfig, abs: (p: string) => string): AuthConfig {
  return auth.type === 'file' ? { ...auth, path: abs(auth.path) } : auth;
}

function resolveTlsPaths(tls: TlsFiles, abs: (p: string) => string): TlsFiles {
  return {
    ...(tls.caFile === undefined ? {} : { caFile: abs(tls.caFile) }),
    ...(tls.certFile === undefined ? {} : { certFile: abs(tls.certFile) }),
    ...(tls.keyFile === undefined ? {} : { keyFile: abs(tls.keyFile) }),
  };
}
